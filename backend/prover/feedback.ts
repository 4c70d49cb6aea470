// The error-fix turn's user message (`create_tool_message`, kimina-format.md §6.2) and its conversation.
// Window numbering follows §6.4's recommendation: lines of the checked code counted after its leading
// `import` lines, with the ` >` marker on the real error line (positions are full-snippet positions).
import type { CommandResponse, ReplMessage, ReplPos, Verdict } from '../protocol';
import { pyStrip } from './pyText';

export const MAX_FEEDBACK_ERRORS = 3;

/** Statuses that mean Lean never judged the proof (the recipe's top-level `error`): `# System Error:` form. */
const SYSTEM_STATUSES = new Set<Verdict['status']>(['timeout_error', 'server_error', 'repl_error', 'rejected']);

interface InfoNode { node?: { stx?: { range?: { start?: ReplPos; finish?: ReplPos } }; goalsBefore?: string[]; goalsAfter?: string[] }; children?: unknown }

function isPos(p: unknown): p is ReplPos {
  return typeof p === 'object' && p !== null && typeof (p as ReplPos).line === 'number' && typeof (p as ReplPos).column === 'number';
}
function atOrAfter(a: unknown, b: unknown): boolean {
  if (!isPos(a) || !isPos(b)) return false;
  return a.line > b.line || (a.line === b.line && a.column >= b.column);
}
function distance(a: ReplPos, b: ReplPos): number {
  return 10 * Math.abs(a.line - b.line) + Math.abs(a.column - b.column);
}

/** Goals at the infotree node whose range lies inside the error range and is closest to it (§6.2.7). */
export function goalsAt(infotree: unknown, pos: ReplPos, endPos: ReplPos | null): string[] | null {
  if (!Array.isArray(infotree) || !endPos) return null;
  const stack: unknown[] = [...infotree];
  let best: { node: InfoNode; d: number } | null = null;
  while (stack.length > 0) {
    const tree = stack.pop() as InfoNode;
    if (typeof tree !== 'object' || tree === null) continue;
    const range = tree.node?.stx?.range;
    if (typeof range !== 'object' || range === null) continue;
    if (atOrAfter(range.start, pos) && atOrAfter(endPos, range.finish)) {
      const d = distance(range.start as ReplPos, pos) + distance(range.finish as ReplPos, endPos);
      if (best === null || d < best.d) best = { node: tree, d };
    }
    if (Array.isArray(tree.children)) stack.push(...tree.children);
  }
  if (!best) return null;
  const before = best.node.node?.goalsBefore;
  const goals = before && before.length > 0 ? before : best.node.node?.goalsAfter;
  return goals && goals.length > 0 ? goals : null;
}

/** The window source: the checked code, trimmed, without its leading `import` lines; and how many lines were cut. */
export function windowLines(code: string): { lines: string[]; shift: number } {
  const leadingBlank = (code.match(/^\s*/)?.[0] ?? '').split('\n').length - 1;
  const lines = pyStrip(code).split('\n');
  let imports = 0;
  while (imports < lines.length && lines[imports].startsWith('import')) imports++;
  return { lines: lines.slice(imports), shift: leadingBlank + imports };
}

const shiftLine = (p: ReplPos, by: number): ReplPos => ({ line: p.line - by, column: p.column });

function errorSection(index: number, error: ReplMessage, window: { lines: string[]; shift: number }, infotree: unknown, infotreeLineOffset: number): string {
  let out = `# Error ${index}:\n`;
  const goals = error.pos ? goalsAt(infotree, shiftLine(error.pos, infotreeLineOffset), error.endPos && shiftLine(error.endPos, infotreeLineOffset)) : null;
  if (goals) out += `Goals state before error position: \n${goals.join('\n')}\n\n`;
  out += `Error message: \n${pyStrip(error.data ?? 'Unknown error')}\n\n`;
  if (error.pos) {
    const at = error.pos.line - window.shift - 1;
    let snippet = '```lean4\n';
    for (let ln = Math.max(0, at - 2); ln < Math.min(window.lines.length, at + 3); ln++) {
      const text = window.lines[ln].replaceAll('count_heartbeats in', '');
      snippet += `${String(ln + 1).padStart(3, '0')}${ln === at ? ' >' : '  '}| ${text}\n`;
    }
    out += `Lean 4 code snippet with error:\n${snippet}\`\`\`\n`;
  }
  return out;
}

/**
 * The feedback message for a failed check of `code`. Empty for a sorry-only failure (as in the recipe).
 * Verdicts without Lean errors that Lean did not accept (timeouts, REPL or server failures, rejected code)
 * get the `# System Error:` form with the verdict's reason.
 */
export interface FeedbackOptions {
  /**
   * Lines to subtract from message positions (full-snippet) to reach infotree positions. The verifier
   * rebases messages to the full snippet but leaves the infotree relative to the body after the import header.
   */
  infotreeLineOffset?: number;
}

export function buildFeedback(code: string, verdict: Verdict, response?: CommandResponse, options: FeedbackOptions = {}): string {
  const errors = verdict.messages.filter((m) => m.severity === 'error').slice(0, MAX_FEEDBACK_ERRORS);
  const window = windowLines(code);
  const offset = options.infotreeLineOffset ?? 0;
  let out = errors.map((e, i) => errorSection(i + 1, e, window, response?.infotree, offset)).join('');
  if (out === '' && verdict.status !== 'valid' && SYSTEM_STATUSES.has(verdict.status) && pyStrip(verdict.reason) !== '') {
    out = `# System Error:\nError message: \n${pyStrip(verdict.reason)}\n\n`;
  }
  return out;
}
