// Messages between the Proof view webview and its host in the extension (types only).
import type { EditorProveResult, LspProveEvent } from '../backend/protocol';

export type ToView =
  | { type: 'start'; id: string; title: string; mode: 'theorem' | 'goal'; file: string; startedAt: number }
  | { type: 'event'; event: LspProveEvent; at: number }
  | { type: 'result'; result: EditorProveResult; canAccept: boolean; at: number }
  | { type: 'failed'; message: string }
  | { type: 'resolved'; outcome: 'accepted' | 'rejected' | 'stale' }
  /** Replaces a failure that no longer holds (e.g. the model has been pulled since). */
  | { type: 'note'; message: string };

export type FromView = {
  type: 'ready' | 'accept' | 'reject' | 'retry' | 'cancel' | 'showDiff' | 'setupLean' | 'pickTheorem';
};
