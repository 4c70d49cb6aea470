// Activation entry of the VS Code extension (filled in by the extension work).
import type * as vscode from 'vscode';

export function activate(_context: vscode.ExtensionContext): void {}
export function deactivate(): void {}
