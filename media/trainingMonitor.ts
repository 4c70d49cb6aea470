// Training Monitor webview (filled in by the training work).
export {};
