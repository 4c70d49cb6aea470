// The Proof view's state: a pure reducer from host messages (prove events, result) to what the view shows.
import {
  type Attempt,
  type EditorProveResult,
  type ProveSchedule,
  type ProveWave,
  type ReplMessage,
  formatWords,
} from '../backend/protocol';

export { formatWords };
import type { ToView, ViewBudget } from './proofViewMessages';

export interface TurnView {
  key: string;
  sample: number;
  turn: number;
  think: string;
  thinkStart: number;
  /** When the think block closed (the answer text began, or the attempt arrived). */
  thinkEnd?: number;
  text: string;
  attempt?: Attempt;
  /** Stopped before Lean judged it (another sample was verified first, or the run was cancelled). */
  stopped?: { reason: 'proved' | 'cancelled'; bySample?: number };
}

export interface ViewState {
  id: string;
  title: string;
  mode: 'theorem' | 'goal' | 'repair';
  file: string;
  startedAt: number;
  stages: string[];
  turns: TurnView[];
  tokens: number;
  tokensPerSecond: number;
  /** How the samples decode (waves of rows, the engine's calibration) and the cost model's estimates. */
  schedule?: ProveSchedule;
  /** The wave decoding now. */
  wave?: ProveWave;
  result?: EditorProveResult;
  canAccept: boolean;
  error?: string;
  /** A note that replaced the error (the failure no longer holds). */
  note?: string;
  resolved?: 'accepted' | 'rejected' | 'stale';
  /** The goal beside the proof: at the cursor (Lean 4 extension) or at the sorry (our Lean check). */
  goal?: { goals: string[]; line: number; source: 'lean4' | 'repl' };
  /** The budget this proof runs under. */
  budget?: ViewBudget;
  /** The budget the next proof will use, when the user changed it during this one. */
  nextBudget?: ViewBudget;
  /** The declaration being proved, from the backend: its name and kind, and its first line in the file (0-based). */
  target?: { name: string; kind: string; line: number };
}

export function emptyState(): ViewState {
  return {
    id: '',
    title: '',
    mode: 'theorem',
    file: '',
    startedAt: 0,
    stages: [],
    turns: [],
    tokens: 0,
    tokensPerSecond: 0,
    canAccept: false,
  };
}

function turnOf(state: ViewState, sample: number, turn: number, at: number): TurnView {
  const key = `${sample}:${turn}`;
  let t = state.turns.find((x) => x.key === key);
  if (!t) {
    t = { key, sample, turn, think: '', thinkStart: at, text: '' };
    state.turns.push(t);
  }
  return t;
}

export function reduce(prev: ViewState, msg: ToView): ViewState {
  if (msg.type === 'start')
    return {
      ...emptyState(),
      id: msg.id,
      title: msg.title,
      mode: msg.mode,
      file: msg.file,
      startedAt: msg.startedAt,
      budget: msg.budget,
    };
  const state: ViewState = { ...prev, turns: prev.turns.map((t) => ({ ...t })), stages: [...prev.stages] };
  switch (msg.type) {
    case 'event': {
      const e = msg.event;
      if (e.id !== state.id) return prev;
      if (e.type === 'stage') state.stages.push(e.message);
      else if (e.type === 'started' && e.schedule) {
        state.schedule = e.schedule;
        state.stages.push(`Decoding: ${e.schedule.text}`);
      } else if (e.type === 'think') turnOf(state, e.sample, e.turn, msg.at).think += e.delta;
      else if (e.type === 'text') {
        const t = turnOf(state, e.sample, e.turn, msg.at);
        t.thinkEnd ??= msg.at;
        t.text += e.delta;
      } else if (e.type === 'attempt') {
        const t = turnOf(state, e.attempt.sample, e.attempt.turn, msg.at);
        t.thinkEnd ??= msg.at;
        t.attempt = e.attempt;
        if (!t.think) t.think = e.attempt.think;
      } else if (e.type === 'verdict') {
        const t = turnOf(state, e.sample, e.turn, msg.at);
        if (t.attempt) t.attempt = { ...t.attempt, verdict: e.verdict };
      } else if (e.type === 'stopped') {
        const t = turnOf(state, e.sample, e.turn, msg.at);
        t.thinkEnd ??= msg.at;
        t.stopped = { reason: e.reason, bySample: e.bySample };
      } else if (e.type === 'progress') {
        state.tokens = e.tokens;
        state.tokensPerSecond = e.tokensPerSecond;
        if (e.wave) state.wave = e.wave;
      } else if (e.type === 'goal') state.goal = { goals: e.goals, line: e.line, source: 'repl' };
      else if (e.type === 'target') state.target = { name: e.name, kind: e.kind, line: e.line };
      else if (e.type === 'error') state.error = e.message;
      return state;
    }
    case 'result': {
      state.result = msg.result;
      if (msg.result.declaration)
        state.title = `${msg.result.mode === 'goal' ? 'Goal in' : msg.result.mode === 'repair' ? 'Repair of' : 'Proof of'} ${msg.result.declaration.name}`;
      state.canAccept = msg.canAccept;
      for (const t of state.turns) t.thinkEnd ??= msg.at;
      for (const a of msg.result.attempts) {
        const t = turnOf(state, a.sample, a.turn, msg.at);
        t.attempt ??= a;
        t.thinkEnd ??= msg.at;
        if (!t.think) t.think = a.think;
      }
      // A cancelled run: every turn still without an answer was stopped by it.
      if (msg.result.status === 'cancelled')
        for (const t of state.turns) if (!t.attempt && !t.stopped) t.stopped = { reason: 'cancelled' };
      return state;
    }
    case 'failed':
      state.error = msg.message;
      for (const t of state.turns) t.thinkEnd ??= Date.now();
      return state;
    case 'goal':
      state.goal = { goals: msg.goals, line: msg.line, source: msg.source };
      return state;
    case 'budget':
      if (!state.id || state.result || state.error) state.budget = msg.budget;
      else state.nextBudget = msg.budget;
      return state;
    case 'note':
      state.error = undefined;
      state.note = msg.message;
      return state;
    case 'agentJobs': // drawn apart from the run (proofView.ts drawAgentJobs)
      return prev;
    case 'resolved':
      state.resolved = msg.outcome;
      state.canAccept = false;
      return state;
  }
}

/** "Thinking…" while the block streams, then "Thought for N s"; none for the user's own proof (a repair's start). */
export function thinkLabel(t: TurnView): string | undefined {
  if (t.attempt?.user) return undefined;
  if (t.thinkEnd === undefined) return 'Thinking…';
  return `Thought for ${Math.max(1, Math.round((t.thinkEnd - t.thinkStart) / 1000))} s`;
}

export function turnLabel(t: TurnView): string {
  if (t.attempt?.user) return 'Your proof, as in the file';
  return `Sample ${t.sample + 1} · ${t.turn === 1 ? 'Turn 1' : `Turn ${t.turn} (error fix)`}`;
}

/** Whether the answer was cut off before it ended (cancelled, or another sample was verified first). */
function cutOff(a: Attempt | undefined): boolean {
  return a?.finishReason === 'cancelled' || a?.format.stopped === true;
}

/** Why a turn without a verdict will not get one, or undefined while Lean may still judge it. */
export function stoppedLabel(t: { stopped?: TurnView['stopped']; attempt?: Attempt }): string | undefined {
  const a = t.attempt;
  if (a?.verdict || (a && !a.format.ok && !cutOff(a))) return undefined;
  const reason =
    t.stopped?.reason ?? (a?.fixSkipped === 'proved' || a?.fixSkipped === 'cancelled' ? a.fixSkipped : undefined);
  if (reason === 'proved') {
    const by = t.stopped?.bySample;
    return `■ Stopped: ${by === undefined ? 'another sample' : `sample ${by + 1}`} was verified first, so this one was not finished`;
  }
  if (reason === 'cancelled') return '■ Stopped: the proof was cancelled';
  if (a?.fixSkipped === 'verifier_failed') return '■ Not checked: Lean could not run';
  if (cutOff(a)) return '■ Stopped before the answer ended; it was not checked';
  return undefined;
}

/** The format line of an attempt, in words; undefined when there is nothing to say (ok, or cut off). */
export function formatLabel(a: Attempt): string | undefined {
  if (a.format.ok || cutOff(a)) return undefined;
  const checked = a.verdict ? ' (Lean still checked the proof)' : '';
  return `Kimina format: ${formatWords[a.format.error] ?? 'the answer does not follow the Kimina format'}${checked}`;
}

/**
 * Maps a line of the checked candidate (1-based) to the user's file (1-based): the candidate holds the file's
 * header and earlier declarations, then the target declaration, whose first line is `target.line` in the file.
 * Returns undefined for lines before the declaration (context, not where the user's theorem stands).
 */
export function fileLineMapper(
  code: string,
  target: ViewState['target'] | undefined,
): (candidateLine: number) => number | undefined {
  if (!target) return (l) => l;
  const lines = code.split('\n');
  const short = target.name.split('.').pop() ?? target.name;
  const escaped = short.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re =
    target.kind === 'example' || target.name === 'example'
      ? /^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*example\b/u
      : new RegExp(
          `^\\s*(?:@\\[[^\\]]*\\]\\s*)?(?:(?:private|protected|noncomputable|nonrec)\\s+)*(?:theorem|lemma)\\s+(?:[^\\s]*\\.)?${escaped}(?=[\\s(:[{]|$)`,
          'u',
        );
  let at = -1;
  lines.forEach((l, i) => {
    if (re.test(l)) at = i;
  });
  if (at < 0) return (l) => l;
  return (l) => (l - 1 >= at ? l - 1 - at + target.line + 1 : undefined);
}

/**
 * How the candidate's lines are numbered in the view. Theorem and repair mode: the file's numbers
 * (fileLineMapper); the lines before the declaration are the file's context. Goal mode: the candidate is the
 * file's header followed by a lemma stating the goal (`<name>_goal`, backend/editor/editorProve.ts), which
 * stands nowhere in the file: the header is context and the lemma's lines have no number.
 */
export function candidateLines(
  code: string,
  mode: ViewState['mode'],
  target: ViewState['target'] | undefined,
): { lineOf: (candidateLine: number) => number | undefined; context: (candidateLine: number) => boolean } {
  if (mode !== 'goal') {
    const lineOf = fileLineMapper(code, target);
    return { lineOf, context: (l) => lineOf(l) === undefined };
  }
  const lines = code.split('\n');
  const lemma = /^\s*(?:theorem|lemma)\s+\S+_goal(?=[\s(:[{]|$)/u;
  let at = -1;
  lines.forEach((l, i) => {
    if (lemma.test(l)) at = i;
  });
  return { lineOf: () => undefined, context: (l) => l - 1 < at };
}

/**
 * The verdict in Lean users' words (double check mark for a clean proof). `stopped` is true for a turn
 * stopped before Lean judged it (shown neutral, not as a failure). `lineOf` maps the candidate's lines to the
 * file's (fileLineMapper).
 */
export function verdictLabel(
  a: Attempt,
  turn: { stopped?: TurnView['stopped'] } = {},
  lineOf: (candidateLine: number) => number | undefined = (l) => l,
  context: (candidateLine: number) => boolean = (l) => lineOf(l) === undefined,
): { text: string; ok: boolean; stopped?: boolean } {
  if (!a.verdict) {
    const stopped = stoppedLabel({ stopped: turn.stopped, attempt: a });
    if (stopped) return { text: stopped, ok: false, stopped: true };
    if (!a.format.ok) {
      const what = a.code === null ? 'so no proof could be taken from it' : 'so it was not checked';
      return { text: `✘ Not checked: ${formatWords[a.format.error] ?? 'the answer is malformed'}, ${what}`, ok: false };
    }
    if (a.code === null) return { text: '✘ No proof could be taken from this answer', ok: false };
    return { text: '… checking with Lean', ok: false };
  }
  const v = a.verdict;
  if (v.status === 'valid') return { text: `✔✔ Lean accepted${v.axioms ? ', axioms clean' : ''}`, ok: true };
  if (v.status === 'lean_error') {
    const first = v.messages.find((m) => m.severity === 'error');
    if (first) {
      const line = lineOf(first.pos.line);
      const where =
        line !== undefined
          ? `at line ${line}`
          : context(first.pos.line)
            ? "in the file's context"
            : "in the goal's lemma";
      return { text: `✘ Lean error ${where}: ${first.data.split('\n')[0]}`, ok: false };
    }
  }
  if (v.status === 'server_error')
    return {
      text: `✘ ${v.leanMissing ? 'Lean is missing' : 'Lean could not run'}: ${v.reason}`,
      ok: false,
    };
  const names: Record<string, string> = {
    sorry: 'Uses sorry',
    lean_error: 'Lean error',
    repl_error: 'The Lean REPL refused it',
    timeout_error: 'Lean timed out',
    rejected: 'Rejected before Lean',
  };
  const reason = v.reason.replace(/^Rejected before Lean(?: \(line \d+\))?: /, '');
  return { text: `✘ ${names[v.status] ?? 'Not accepted'}: ${reason}`, ok: false };
}

/** Lean's messages on the candidate, by candidate line, with the line numbers of the file. */
export function messagesByLine(a: Attempt): Map<number, ReplMessage[]> {
  const out = new Map<number, ReplMessage[]>();
  for (const m of a.verdict?.messages ?? []) {
    if (m.severity === 'info') continue;
    out.set(m.pos.line, [...(out.get(m.pos.line) ?? []), m]);
  }
  return out;
}

/**
 * Line breaks Lean does not read as one, shown as a visible mark of one character each (so columns stay
 * right): a lone CR would otherwise show as a space while an editor breaks the line there (issue 29).
 */
const BREAK_MARKS: Record<string, string> = {
  '\r': '␍',
  '\u000B': '␋',
  '\u000C': '␌',
  '\u001C': '␜',
  '\u001D': '␝',
  '\u001E': '␞',
  '\u0085': '␤',
  '\u2028': '␤',
  '\u2029': '¶',
};

/** `text` with every CR, NEL, LS, PS, VT, FF and U+001C–U+001E shown as a mark (␍, ␤, ¶, …); LF kept. */
export function visibleBreaks(text: string): string {
  return text.replace(/[\r\u000B\u000C\u001C-\u001E\u0085\u2028\u2029]/gu, (c) => BREAK_MARKS[c]);
}

export interface TextPart {
  kind: 'prose' | 'code';
  text: string;
  lang?: string;
}

/** Splits streamed think text into prose and fenced code (```tactics, ```lean4), an unclosed fence included. */
export function splitFences(raw: string): TextPart[] {
  const text = visibleBreaks(raw);
  const parts: TextPart[] = [];
  const fence = /```([\w-]*)[^\S\n]*\n?([\s\S]*?)(?:```|$)/g;
  let last = 0;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    if (m[0] === '') {
      fence.lastIndex++;
      continue;
    }
    if (m.index > last) parts.push({ kind: 'prose', text: text.slice(last, m.index) });
    parts.push({ kind: 'code', lang: m[1] || undefined, text: m[2].replace(/\n$/, '') });
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push({ kind: 'prose', text: text.slice(last) });
  return parts;
}

export type ResultButton = 'accept' | 'reject' | 'showDiff' | 'cancel' | 'retry' | 'setupLean' | 'pickTheorem';

function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function elapsed(s: ViewState, now: number): string {
  const seconds = Math.max(0, Math.round((now - s.startedAt) / 1000));
  return seconds >= 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds} s`;
}

/**
 * The time estimate of a running proof. With the engine's calibrated cost model (the schedule): the expected
 * time to the first verified proof and the longest the decoding can take, less the time spent. Without one: the
 * longest at the measured speed (every answer of every turn at the token limit).
 */
function estimateText(s: ViewState, now: number): string {
  const spent = Math.max(0, (now - s.startedAt) / 1000);
  const c = s.schedule;
  if (c?.worstCaseSeconds !== undefined) {
    const first = c.expectedFirstProofSeconds;
    const expected =
      first === undefined
        ? ''
        : first > spent
          ? ` · first proof expected in about ${durationText(first - spent)}`
          : ' · past the expected first proof';
    const left = c.worstCaseSeconds - spent;
    return `${expected}${left > 0 ? ` · at most about ${durationText(left)} left` : ''} (cost model)`;
  }
  const speed = s.tokensPerSecond || s.budget?.tokensPerSecond;
  const b = s.budget;
  const left = b && speed ? (b.maxTokens * b.samples * (1 + b.fixTurns) - s.tokens) / speed : undefined;
  return left !== undefined && left > 0 ? ` · at most about ${durationText(left)} left` : '';
}

/** The result box at the bottom of the view: its class, title, text and which buttons show. */
export function resultLook(
  s: ViewState,
  now: number,
): { cls: string; title: string; text: string; spinning: boolean; buttons: ResultButton[] } {
  const r = s.result;
  if (!r && s.note) return { cls: 'result note', title: 'Ready', text: s.note, spinning: false, buttons: ['retry'] };
  if (!r && s.error) return { cls: 'result bad', title: 'Failed', text: s.error, spinning: false, buttons: ['retry'] };
  if (!r) {
    const w = s.wave;
    const wave = w && w.of > 1 ? ` · wave ${w.index} of ${w.of}, ${w.rows} row${w.rows === 1 ? '' : 's'} at once` : '';
    const rate = s.tokensPerSecond ? ` · ${s.tokens} tokens · ${s.tokensPerSecond.toFixed(1)} tok/s` : '';
    return {
      cls: 'result running',
      title: 'Working',
      text: `${elapsed(s, now)}${wave}${rate}${estimateText(s, now)}`,
      spinning: true,
      buttons: ['cancel'],
    };
  }
  if (r.status === 'proved') {
    const recheck = r.goal?.recheck ? ` The whole declaration re-checked: ${r.goal.recheck.reason}.` : '';
    const text =
      s.resolved === 'accepted'
        ? 'Accepted: the proof is in the file.'
        : s.resolved === 'rejected'
          ? 'Rejected.'
          : s.resolved === 'stale'
            ? 'The file changed since the proof started; retry.'
            : `Verified by Lean.${recheck}`;
    return {
      cls: 'result ok',
      title: '✔✔ Proved',
      text,
      spinning: false,
      buttons: s.canAccept ? ['accept', 'reject', 'showDiff'] : [],
    };
  }
  if (r.verifierFailure) {
    const missing = r.verifierFailure.leanMissing;
    return {
      cls: 'result bad',
      title: missing ? 'Lean is missing' : 'Lean could not run',
      text: `${
        missing
          ? 'Lean could not be started, so no answer could be checked.'
          : 'The Lean verifier failed, so no answer could be checked.'
      } The proof was stopped without a fix turn. Set up Lean for this project, then retry. (${r.verifierFailure.reason})`,
      spinning: false,
      buttons: ['setupLean', 'retry'],
    };
  }
  const cancelled = r.status === 'cancelled';
  const nothingHere = Boolean(r.problem) && !r.declaration && r.attempts.length === 0;
  if (nothingHere)
    return {
      cls: 'result note',
      title: 'No theorem here',
      text: `${r.problem} Pick a theorem with a sorry in this file to prove it.`,
      spinning: false,
      buttons: ['pickTheorem'],
    };
  const n = r.attempts.length;
  return {
    cls: `result ${cancelled ? 'cancelled' : 'bad'}`,
    title: cancelled ? 'Cancelled' : 'Not proved',
    text:
      r.problem ??
      (cancelled ? 'The proof was cancelled.' : `${n} attempt${n === 1 ? '' : 's'}, none verified by Lean.`),
    spinning: false,
    buttons: ['retry'],
  };
}

/** Every text the view shows for this state (headings, labels, verdicts, the result box), for tests and checks. */
export function viewTexts(s: ViewState, now = Date.now()): string[] {
  const out: string[] = [s.title, ...s.stages];
  if (s.goal) out.push(goalHeading(s.goal));
  for (const t of s.turns) {
    out.push(turnLabel(t), thinkLabel(t) ?? '');
    if (t.attempt) {
      const f = formatLabel(t.attempt);
      if (f) out.push(f);
      const { lineOf, context } = candidateLines(t.attempt.code ?? '', s.mode, s.target);
      out.push(verdictLabel(t.attempt, t, lineOf, context).text);
      if (t.attempt.errorGoal) out.push(errorGoalHeading(lineOf(t.attempt.errorGoal.line)));
    } else {
      const stopped = stoppedLabel(t);
      if (stopped) out.push(stopped);
    }
  }
  const look = resultLook(s, now);
  out.push(look.title, look.text);
  return out.filter(Boolean);
}

/** The heading of the goal section: where the goal is and who reported it. */
export function goalHeading(g: NonNullable<ViewState['goal']>): string {
  const n = g.goals.length;
  const count = n === 0 ? 'no goals' : n === 1 ? '1 goal' : `${n} goals`;
  const from = g.source === 'lean4' ? 'the Lean 4 extension' : "Kimina's Lean check";
  return `Goal at line ${g.line + 1} (${count}, from ${from})`;
}

/** The goal Lean had before an attempt's first error, with the file's line number. */
export function errorGoalHeading(line: number | undefined): string {
  return line === undefined ? 'Goal before the error' : `Goal before the error at line ${line}`;
}
