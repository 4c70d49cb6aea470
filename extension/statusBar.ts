// The status bar item: starting, ready, proving, training, error. A click opens the Kimina log.
import * as vscode from 'vscode';
import type { BackendStatus } from '../backend/protocol';

const looks: Record<BackendStatus['state'], { icon: string; label: string }> = {
  starting: { icon: '$(loading~spin)', label: 'starting' },
  ready: { icon: '$(check)', label: 'ready' },
  proving: { icon: '$(sync~spin)', label: 'proving' },
  training: { icon: '$(pulse)', label: 'training' },
  error: { icon: '$(error)', label: 'error' },
  restricted: { icon: '$(shield)', label: 'Restricted Mode' },
};

export function createStatusBar(onStatus: vscode.Event<BackendStatus>, initial: BackendStatus): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('kimina.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Kimina';
  item.command = 'kimina.showLog';
  const show = (s: BackendStatus) => {
    const look = looks[s.state] ?? looks.error;
    item.text = `${look.icon} Kimina${s.state === 'ready' ? '' : `: ${look.label}`}`;
    const lines = [
      `Kimina: ${look.label}`,
      s.detail,
      s.engine && `engine: ${s.engine}`,
      s.model && `model: ${s.model}`,
      s.lean && `Lean: ${s.lean}`,
      s.backend && `proofs run ${s.backend === 'server' ? 'on the attached server' : 'in the editor backend'}`,
      ...(s.setup?.hints ?? []),
      'Click to open the log.',
    ];
    item.tooltip = lines.filter(Boolean).join('\n');
    item.backgroundColor = s.state === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    item.show();
  };
  show(initial);
  const sub = onStatus(show);
  return vscode.Disposable.from(item, sub);
}
