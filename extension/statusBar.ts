// The status bar item: starting, ready, proving, training, error, or what is missing (model, Lean) with a click
// that fixes it; otherwise a click opens the Kimina log. Texts: words.ts statusLook.
import * as vscode from 'vscode';
import type { BackendStatus } from '../backend/protocol';
import { statusLook } from './words';

export function createStatusBar(onStatus: vscode.Event<BackendStatus>, initial: BackendStatus): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('kimina.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Kimina';
  const show = (s: BackendStatus) => {
    const look = statusLook(s);
    item.text = look.text;
    item.tooltip = look.tooltip;
    item.command = look.command;
    item.backgroundColor = look.error
      ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : look.missing
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : undefined;
    item.show();
  };
  show(initial);
  const sub = onStatus(show);
  return vscode.Disposable.from(item, sub);
}
