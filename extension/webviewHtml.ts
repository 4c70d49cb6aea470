// The HTML shell every Kimina webview uses: its bundled script and stylesheet under a nonce-based CSP.
import * as vscode from 'vscode';

export interface WebviewPage {
  /** The bundle's base name in dist/media: `<name>.js` and `<name>.css`. */
  name: string;
  title: string;
  /** What #root shows until the script has drawn. */
  placeholder: string;
  /** Allow inline styles (charts set element styles). */
  inlineStyles?: boolean;
}

export function webviewHtml(webview: vscode.Webview, media: vscode.Uri, page: WebviewPage): string {
  const nonce = Array.from({ length: 24 }, () => Math.floor(Math.random() * 36).toString(36)).join('');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(media, `${page.name}.js`));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(media, `${page.name}.css`));
  const styleSrc = `${webview.cspSource}${page.inlineStyles ? " 'unsafe-inline'" : ''}`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${styleSrc}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><link rel="stylesheet" href="${style}"><title>${page.title}</title></head>
<body><main id="root">${page.placeholder}</main><script nonce="${nonce}" src="${script}"></script></body></html>`;
}
