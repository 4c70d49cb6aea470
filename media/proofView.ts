// Proof view webview (filled in by the extension work).
export {};
