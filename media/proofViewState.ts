// The Proof view's state: a pure reducer from host messages (prove events, result) to what the view shows.
import type { Attempt, EditorProveResult } from '../backend/protocol';
import type { ToView } from './proofViewMessages';

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
  result?: EditorProveResult;
  canAccept: boolean;
  error?: string;
  resolved?: 'accepted' | 'rejected' | 'stale';
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
    return { ...emptyState(), id: msg.id, title: msg.title, mode: msg.mode, file: msg.file, startedAt: msg.startedAt };
  const state: ViewState = { ...prev, turns: prev.turns.map((t) => ({ ...t })), stages: [...prev.stages] };
  switch (msg.type) {
    case 'event': {
      const e = msg.event;
      if (e.id !== state.id) return prev;
      if (e.type === 'stage') state.stages.push(e.message);
      else if (e.type === 'think') turnOf(state, e.sample, e.turn, msg.at).think += e.delta;
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
      } else if (e.type === 'error') state.error = e.message;
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
      return state;
    }
    case 'failed':
      state.error = msg.message;
      for (const t of state.turns) t.thinkEnd ??= Date.now();
      return state;
    case 'resolved':
      state.resolved = msg.outcome;
      state.canAccept = false;
      return state;
  }
}

/** "Thinking…" while the block streams, then "Thought for N s". */
export function thinkLabel(t: TurnView): string {
  if (t.thinkEnd === undefined) return 'Thinking…';
  return `Thought for ${Math.max(1, Math.round((t.thinkEnd - t.thinkStart) / 1000))} s`;
}

export function turnLabel(t: TurnView): string {
  if (t.attempt?.user) return 'Your proof, as in the file';
  return `Sample ${t.sample + 1} · ${t.turn === 1 ? 'Turn 1' : `Turn ${t.turn} (error fix)`}`;
}

/** Why a turn without a verdict will not get one, or undefined while Lean may still judge it. */
export function stoppedLabel(t: { stopped?: TurnView['stopped']; attempt?: Attempt }): string | undefined {
  const a = t.attempt;
  if (a?.verdict || (a && !a.format.ok)) return undefined;
  const reason =
    t.stopped?.reason ?? (a?.fixSkipped === 'proved' || a?.fixSkipped === 'cancelled' ? a.fixSkipped : undefined);
  if (reason === 'proved') {
    const by = t.stopped?.bySample;
    return `■ Stopped: ${by === undefined ? 'another sample' : `sample ${by + 1}`} was verified first, so this one was not finished`;
  }
  if (reason === 'cancelled') return '■ Stopped: the proof was cancelled';
  return undefined;
}

/**
 * The verdict in Lean users' words (double check mark for a clean proof). `stopped` is true for a turn
 * stopped before Lean judged it (shown neutral, not as a failure).
 */
export function verdictLabel(
  a: Attempt,
  turn: { stopped?: TurnView['stopped'] } = {},
): { text: string; ok: boolean; stopped?: boolean } {
  if (!a.format.ok) return { text: `✘ Format: ${a.format.error}`, ok: false };
  if (!a.verdict) {
    const stopped = stoppedLabel({ stopped: turn.stopped, attempt: a });
    return stopped ? { text: stopped, ok: false, stopped: true } : { text: '… checking with Lean', ok: false };
  }
  const v = a.verdict;
  if (v.status === 'valid') return { text: `✔✔ Lean accepted${v.axioms ? ', axioms clean' : ''}`, ok: true };
  const names: Record<string, string> = {
    sorry: 'uses sorry',
    lean_error: 'Lean error',
    repl_error: 'REPL error',
    timeout_error: 'timed out',
    server_error: 'server error',
    rejected: 'rejected',
  };
  return { text: `✘ ${names[v.status] ?? v.status}: ${v.reason}`, ok: false };
}

export interface TextPart {
  kind: 'prose' | 'code';
  text: string;
  lang?: string;
}

/** Splits streamed think text into prose and fenced code (```tactics, ```lean4), an unclosed fence included. */
export function splitFences(text: string): TextPart[] {
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
