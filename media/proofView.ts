// The Proof view webview: renders the state of one proof run (see proofViewState.ts) and sends button presses
// to the host. Plain DOM, no framework; re-renders on each message, keeping the think blocks' open/closed state.
import './proofView.css';
import type { FromView, ToView } from './proofViewMessages';
import {
  emptyState,
  reduce,
  splitFences,
  stoppedLabel,
  thinkLabel,
  turnLabel,
  verdictLabel,
  type TurnView,
  type ViewState,
} from './proofViewState';

declare function acquireVsCodeApi(): { postMessage(message: FromView): void };
const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;
let state: ViewState = emptyState();
const userOpen = new Map<string, boolean>();
let scheduled = false;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

function button(id: string, label: string, action: FromView['type'], primary = false): HTMLButtonElement {
  const b = el('button', { id, class: primary ? 'primary' : 'secondary' }, label);
  b.addEventListener('click', () => vscode.postMessage({ type: action }));
  return b;
}

/** The candidate with line numbers; lines Lean complained about are marked, the message shown under them. */
function candidate(t: TurnView): HTMLElement | null {
  const a = t.attempt;
  if (!a?.code) return null;
  const messages = a.verdict?.messages.filter((m) => m.severity !== 'info') ?? [];
  const pre = el('pre', { class: 'candidate' });
  a.code.split('\n').forEach((line, i) => {
    const here = messages.filter((m) => m.pos.line === i + 1);
    pre.append(
      el(
        'div',
        { class: here.some((m) => m.severity === 'error') ? 'line error-line' : 'line' },
        el('span', { class: 'ln' }, String(i + 1)),
        line,
      ),
    );
    for (const m of here) {
      const caret = ' '.repeat(Array.from(line).slice(0, m.pos.column).length);
      pre.append(
        el(
          'div',
          { class: `lean-message ${m.severity}` },
          el('span', { class: 'ln' }, ''),
          `${caret}^ ${m.severity}: ${m.data}`,
        ),
      );
    }
  });
  return pre;
}

function turnSection(t: TurnView): HTMLElement {
  const open = userOpen.get(t.key) ?? t.thinkEnd === undefined;
  const thinkText = el(
    'pre',
    { class: 'think-text' },
    ...(t.think
      ? splitFences(t.think).map((p) =>
          p.kind === 'code' ? el('code', { class: `fence${p.lang ? ` lang-${p.lang}` : ''}` }, p.text) : p.text,
        )
      : ['…']),
  );
  const details = el('details', { class: 'think', 'data-key': t.key }, el('summary', {}, thinkLabel(t)), thinkText);
  details.open = open;
  // 'toggle' also fires for the assignment above: remember only what the user changed.
  details.addEventListener('toggle', () => {
    if (details.open !== open) userOpen.set(t.key, details.open);
  });
  const section = el('section', { class: `turn turn-${t.turn}` }, el('h3', {}, turnLabel(t)), details);
  if (t.attempt) {
    const v = verdictLabel(t.attempt, t);
    section.append(
      el(
        'div',
        { class: `format ${t.attempt.format.ok ? 'ok' : 'bad'}` },
        `Format: ${t.attempt.format.ok ? 'ok' : `${t.attempt.format.error}${t.attempt.format.message ? ` — ${t.attempt.format.message}` : ''}`}`,
      ),
    );
    if (t.attempt.finishReason === 'length')
      section.append(
        el('div', { class: 'cut bad' }, `Cut short: ${t.attempt.cut ?? 'the answer reached the token limit'}`),
      );
    section.append(el('div', { class: `verdict ${v.ok ? 'ok' : v.stopped ? 'stopped' : 'bad'}` }, v.text));
    section.append(candidate(t) ?? el('div', { class: 'muted' }, 'No Lean code could be extracted from this answer.'));
  } else {
    if (t.text) section.append(el('pre', { class: 'answer' }, t.text));
    const stopped = stoppedLabel(t);
    if (stopped) section.append(el('div', { class: 'verdict stopped' }, stopped));
  }
  return section;
}

function resultSection(s: ViewState): HTMLElement {
  const r = s.result;
  if (!r) {
    if (s.error)
      return el(
        'section',
        { class: 'result bad' },
        el('h2', {}, 'Failed'),
        el('p', {}, s.error),
        el('div', { class: 'buttons' }, button('retry', 'Retry', 'retry', true)),
      );
    const rate = s.tokensPerSecond ? ` · ${s.tokens} tokens · ${s.tokensPerSecond.toFixed(1)} tok/s` : '';
    return el(
      'section',
      { class: 'result running' },
      el('span', { class: 'spinner' }, ''),
      `Working${rate}`,
      el('div', { class: 'buttons' }, button('cancel', 'Cancel', 'cancel')),
    );
  }
  if (r.status === 'proved') {
    const recheck = r.goal?.recheck ? ` The whole declaration re-checked: ${r.goal.recheck.reason}.` : '';
    const note =
      s.resolved === 'accepted'
        ? 'Accepted: the proof is in the file.'
        : s.resolved === 'rejected'
          ? 'Rejected.'
          : s.resolved === 'stale'
            ? 'The file changed since the proof started; retry.'
            : `Verified by Lean.${recheck}`;
    const buttons = s.canAccept
      ? el(
          'div',
          { class: 'buttons' },
          button('accept', 'Accept', 'accept', true),
          button('reject', 'Reject', 'reject'),
          button('show-diff', 'Show Diff', 'showDiff'),
        )
      : null;
    return el('section', { class: 'result ok' }, el('h2', {}, '✔✔ Proved'), el('p', {}, note), buttons);
  }
  const title = r.status === 'cancelled' ? 'Cancelled' : 'Not proved';
  const why =
    r.problem ??
    (r.status === 'cancelled'
      ? 'The proof was cancelled.'
      : `${r.attempts.length} attempt${r.attempts.length === 1 ? '' : 's'}, none verified by Lean.`);
  return el(
    'section',
    { class: `result ${r.status === 'cancelled' ? 'cancelled' : 'bad'}` },
    el('h2', {}, title),
    el('p', {}, why),
    el('div', { class: 'buttons' }, button('retry', 'Retry', 'retry', true)),
  );
}

function render(): void {
  scheduled = false;
  if (!state.id) return;
  const header = el('header', {}, el('h1', {}, state.title), el('div', { class: 'muted' }, state.file));
  const stages = state.stages.length
    ? el('ul', { class: 'stages' }, ...state.stages.map((s) => el('li', {}, s)))
    : null;
  const follow = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  root.replaceChildren(header, ...(stages ? [stages] : []), ...state.turns.map(turnSection), resultSection(state));
  for (const pre of Array.from(root.querySelectorAll('details[open] .think-text'))) pre.scrollTop = pre.scrollHeight;
  if (follow) window.scrollTo(0, document.body.scrollHeight);
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  if (event.data.type === 'start') userOpen.clear();
  state = reduce(state, event.data);
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(render);
  }
});
vscode.postMessage({ type: 'ready' });
