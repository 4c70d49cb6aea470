// Our strict verdict in kimina-lean-server's terms, so that kimina-client's analyze() (which only
// looks at `error`, a REPL `message`, error-severity messages and `sorries`) can never call a
// snippet valid that our verdict does not: a rejected or cheating snippet gains an error-severity
// message (or a sorry entry for admit/sorryAx) saying why.
import type { CommandResponse, ReplDiagnostics, ReplMessage, ReplResponse, ReplSorry } from '../protocol';
import type { CheckOutcome } from '../lean/types';
import { isSorryWarning } from '../lean/verdict';

function diagnostics(out: CheckOutcome): ReplDiagnostics {
  const d: ReplDiagnostics = {};
  if (out.run?.replId) d.repl_uuid = out.run.replId;
  if (out.run?.memoryBytes) d.memory_max = out.run.memoryBytes;
  return d;
}

function kiminaNote(data: string, at?: ReplMessage['pos']): ReplMessage {
  const pos = at ?? { line: 1, column: 0 };
  return { pos, endPos: pos, severity: 'error', data: `kimina: ${data}` };
}

/** One `/api/check` result for a snippet. */
export function toKlsResult(id: string, out: CheckOutcome, debug: boolean): ReplResponse {
  const v = out.verdict;
  const extra = debug ? { diagnostics: diagnostics(out) } : {};
  switch (v.status) {
    case 'timeout_error':
    case 'server_error':
      return { id, time: 0, error: v.reason, ...extra };
    case 'repl_error':
      return { id, time: v.time, response: { message: out.replMessage ?? v.reason }, ...extra };
    default:
      break;
  }
  const response: CommandResponse = out.response ? structuredClone(out.response) : { messages: [] };
  const messages = [...(response.messages ?? [])];
  const sorries: ReplSorry[] = [...(response.sorries ?? [])];
  const hasError = messages.some((m) => m.severity === 'error');
  if (!out.response) {
    // refused before Lean: the verdict's messages say where and why
    messages.push(...v.messages.filter((m) => m.severity === 'error'));
  } else if (v.status === 'sorry' && sorries.length === 0 && !hasError) {
    // where Lean said: its sorry warning, else the declaration whose audit found sorryAx
    const warning = messages.find(isSorryWarning);
    const pos = warning?.pos ?? out.sorryAt ?? { line: 1, column: 0 };
    sorries.push({ goal: `kimina: ${v.reason}`, pos, endPos: warning?.endPos ?? pos });
  } else if (v.status !== 'valid' && v.status !== 'sorry' && !hasError) {
    messages.push(kiminaNote(v.reason));
  }
  if (messages.length) response.messages = messages;
  else delete response.messages;
  if (sorries.length) response.sorries = sorries;
  else delete response.sorries;
  return { id, time: v.time, response, ...extra };
}
