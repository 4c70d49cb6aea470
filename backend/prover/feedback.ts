// The error-fix turn's user message (`create_tool_message`, kimina-format.md §6.2) and its conversation.
// Two line numberings of the code window (kimina-format.md §6.4):
// - `released` (the default): what the released checkpoints saw in training. The recipe ran on kimina-lean-server
//   before its PR #56, which reported positions relative to the body (after the leading blank and `import` lines);
//   the recipe indexed them into the code less its leading `import` lines. For the usual layout the ` >` marker
//   lands one line above the real error line, and that is the layout the model learned to read.
// - `snippet`: the corrected numbering (full-snippet line minus the leading `import` lines), marker on the real line.
import type { CommandResponse, ReplMessage, ReplPos, Verdict } from '../protocol';
import { splitHeader } from '../lean/header';
import { pyStrip } from '../model/pythonStrings';

export const MAX_FEEDBACK_ERRORS = 3;

/** Statuses that mean Lean never judged the proof (the recipe's top-level `error`): `# System Error:` form. */
const SYSTEM_STATUSES = new Set<Verdict['status']>(['timeout_error', 'server_error', 'repl_error', 'rejected']);

interface InfoNode {
  node?: { stx?: { range?: { start?: ReplPos; finish?: ReplPos } }; goalsBefore?: string[]; goalsAfter?: string[] };
  children?: unknown;
}

function isPos(p: unknown): p is ReplPos {
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof (p as ReplPos).line === 'number' &&
    typeof (p as ReplPos).column === 'number'
  );
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

/**
 * The window source, as the recipe's `split_proof_header` makes it: the checked code stripped, less its first run
 * of lines starting with `import` (lines before that run are kept only if the run is missing, as in the recipe);
 * `shift` is how many lines of the original code precede the window's first line.
 */
export function windowLines(code: string): { lines: string[]; shift: number } {
  const leadingBlank = (code.match(/^\s*/)?.[0] ?? '').split('\n').length - 1;
  const lines = pyStrip(code).split('\n');
  let imports = 0;
  let inRun = false;
  for (const line of lines) {
    if (line.startsWith('import')) {
      inRun = true;
      imports++;
    } else if (inRun) break;
  }
  return { lines: lines.slice(imports), shift: leadingBlank + imports };
}

const shiftLine = (p: ReplPos, by: number): ReplPos => ({ line: p.line - by, column: p.column });

/** Where an error's window is centred (0-based index into the window lines) and the positions its goals are looked up with. */
interface Placing {
  windowIndex: (pos: ReplPos) => number;
  infotreeShift: number;
}

function errorSection(
  index: number,
  error: ReplMessage,
  window: { lines: string[] },
  infotree: unknown,
  placing: Placing,
): string {
  let out = `# Error ${index}:\n`;
  const by = placing.infotreeShift;
  const goals = error.pos
    ? goalsAt(infotree, shiftLine(error.pos, by), error.endPos && shiftLine(error.endPos, by))
    : null;
  if (goals) out += `Goals state before error position: \n${goals.join('\n')}\n\n`;
  out += `Error message: \n${pyStrip(error.data ?? 'Unknown error')}\n\n`;
  if (error.pos) {
    const at = placing.windowIndex(error.pos);
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
type LineNumbering = 'released' | 'snippet';

export interface FeedbackOptions {
  /** `released` (default): the released checkpoints' training layout; `snippet`: marker on the real error line. */
  lineNumbering?: LineNumbering;
  /**
   * `snippet` numbering only: lines to subtract from message positions (full-snippet) to reach infotree positions.
   * The verifier rebases messages to the full snippet but leaves the infotree relative to the body after the
   * import header. (`released` numbering works in body positions, so it needs no offset.)
   */
  infotreeLineOffset?: number;
  /**
   * The messages to render, in order, in place of the verdict's first 3 errors (a repair adds Lean's deprecation
   * warnings that name a replacement: backend/prover/repair.ts).
   */
  messages?: ReplMessage[];
}

export function buildFeedback(
  code: string,
  verdict: Verdict,
  response?: CommandResponse,
  options: FeedbackOptions = {},
): string {
  const errors =
    options.messages ?? verdict.messages.filter((m) => m.severity === 'error').slice(0, MAX_FEEDBACK_ERRORS);
  const window = windowLines(code);
  let placing: Placing;
  if ((options.lineNumbering ?? 'released') === 'released') {
    // kimina-lean-server before PR #56: positions relative to the body after its header (leading blank/import lines).
    const body = splitHeader(code).headerLines;
    placing = { windowIndex: (pos) => pos.line - body - 1, infotreeShift: body };
  } else {
    placing = { windowIndex: (pos) => pos.line - window.shift - 1, infotreeShift: options.infotreeLineOffset ?? 0 };
  }
  let out = errors.map((e, i) => errorSection(i + 1, e, window, response?.infotree, placing)).join('');
  if (
    out === '' &&
    verdict.status !== 'valid' &&
    SYSTEM_STATUSES.has(verdict.status) &&
    pyStrip(verdict.reason) !== ''
  ) {
    out = `# System Error:\nError message: \n${pyStrip(verdict.reason)}\n\n`;
  }
  return out;
}
