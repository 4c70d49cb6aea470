// TEST DOUBLE of kimina-client 0.2.1's `ReplResponse.analyze()` (client/kimina_client/models.py),
// rewritten in TypeScript: how the RL reward judges an /api/check result.
import type { ReplResponse } from '../../backend/protocol';

export type KiminaStatus = 'valid' | 'sorry' | 'lean_error' | 'repl_error' | 'timeout_error' | 'server_error';

export function kiminaAnalyze(r: ReplResponse): KiminaStatus {
  if (r.error !== undefined && r.error !== null)
    return r.error.includes('timed out') ? 'timeout_error' : 'server_error';
  if (r.response === undefined) throw new Error('ReplResponse has no response or error');
  if ('message' in r.response) return 'repl_error';
  const messages = r.response.messages ?? [];
  if (messages.some((m) => m.severity === 'error')) return 'lean_error';
  if ((r.response.sorries ?? []).length === 0) return 'valid';
  return 'sorry';
}
