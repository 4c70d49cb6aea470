// The Proof view webview: renders the state of one proof run (see proofViewState.ts) and sends button presses
// to the host. Plain DOM, no framework. The page is built once per run and then updated in place: buttons stay
// the same elements while text streams (a press that spans frames still lands), streamed text is appended to
// the nodes already there (a selection survives), and a think block follows the stream only while the user
// has not scrolled it away from the bottom.
import './proofView.css';
import type { AgentJob } from '../backend/protocol';
import type { BudgetPreset, FromView, ToView } from './proofViewMessages';
import {
  emptyState,
  candidateLines,
  formatLabel,
  messagesByLine,
  errorGoalHeading,
  goalHeading,
  reduce,
  resultLook,
  splitFences,
  stoppedLabel,
  thinkLabel,
  turnLabel,
  verdictLabel,
  visibleBreaks,
  type ResultButton,
  type TextPart,
  type TurnView,
  type ViewState,
} from './proofViewState';

declare function acquireVsCodeApi(): { postMessage(message: FromView): void };
const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;
let state: ViewState = emptyState();
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

/** Sets an element's text only when it changed (no needless DOM work, no lost selection). */
function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

function setClass(node: HTMLElement, cls: string): void {
  if (node.className !== cls) node.className = cls;
}

function show(node: HTMLElement, visible: boolean): void {
  if (node.hidden === visible) node.hidden = !visible;
}

function button(
  id: string,
  label: string,
  action: Exclude<FromView['type'], 'budget'>,
  primary = false,
): HTMLButtonElement {
  const b = el('button', { id, class: primary ? 'primary' : 'secondary' }, label);
  b.addEventListener('click', () => vscode.postMessage({ type: action }));
  return b;
}

/** Is this scrollable box at (or within a few pixels of) its bottom? */
function atBottom(box: HTMLElement): boolean {
  return box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
}

/** One turn's elements, kept for the whole run. */
interface TurnDom {
  section: HTMLElement;
  heading: HTMLElement;
  details: HTMLDetailsElement;
  summary: HTMLElement;
  thinkText: HTMLElement;
  /** The think parts the nodes of thinkText show now. */
  parts: TextPart[];
  /** Follow the stream: true until the user scrolls the think block up, again once they scroll to its end. */
  follow: boolean;
  /** The user opened or closed the block themselves: keep it so. */
  userToggled: boolean;
  body: HTMLElement;
  /** What the body was drawn from (rebuilt only when one of these changes). */
  drawn: { attempt?: TurnView['attempt']; stopped?: TurnView['stopped']; target?: ViewState['target'] } | null;
  answer: HTMLElement | null;
}

/** The run's elements, kept until the next run starts. */
interface Dom {
  id: string;
  title: HTMLElement;
  file: HTMLElement;
  stages: HTMLUListElement;
  turns: HTMLElement;
  turnDoms: Map<string, TurnDom>;
  result: HTMLElement;
  resultTitle: HTMLElement;
  resultText: HTMLElement;
  spinner: HTMLElement;
  buttons: Record<ResultButton, HTMLButtonElement>;
  budget: HTMLElement;
  budgetText: HTMLElement;
  presets: Record<BudgetPreset, HTMLButtonElement>;
  goal: HTMLElement;
  goalHeading: HTMLElement;
  goalText: HTMLElement;
}

const presetLabels: Record<BudgetPreset, string> = { quick: 'Quick', thorough: 'Thorough', custom: 'Custom' };

let dom: Dom | null = null;

function build(id: string): Dom {
  const title = el('h1');
  const file = el('div', { class: 'muted' });
  const stages = el('ul', { class: 'stages' });
  const turns = el('div', { class: 'turns' });
  const spinner = el('span', { class: 'spinner' });
  const resultTitle = el('h2');
  const resultText = el('p');
  const buttons = {
    accept: button('accept', 'Accept', 'accept', true),
    reject: button('reject', 'Reject', 'reject'),
    showDiff: button('show-diff', 'Show Diff', 'showDiff'),
    setupLean: button('setup-lean', 'Set Up Lean', 'setupLean', true),
    pickTheorem: button('pick-theorem', 'Pick a Theorem', 'pickTheorem', true),
    retry: button('retry', 'Retry', 'retry', true),
    cancel: button('cancel', 'Cancel', 'cancel'),
  };
  const result = el(
    'section',
    { class: 'result' },
    el('div', { class: 'result-head' }, spinner, resultTitle),
    resultText,
    el('div', { class: 'buttons' }, ...Object.values(buttons)),
  );
  const presets = {} as Record<BudgetPreset, HTMLButtonElement>;
  for (const preset of Object.keys(presetLabels) as BudgetPreset[]) {
    const b = el('button', { id: `budget-${preset}`, class: 'preset', title: `Budget: ${presetLabels[preset]}` });
    b.textContent = presetLabels[preset];
    b.addEventListener('click', () => vscode.postMessage({ type: 'budget', preset }));
    presets[preset] = b;
  }
  const budgetText = el('span', { class: 'budget-text muted' });
  const budget = el(
    'div',
    { class: 'budget' },
    el('span', { class: 'muted' }, 'Budget:'),
    ...Object.values(presets),
    budgetText,
  );
  const goalHeadingEl = el('div', { class: 'goal-heading' });
  const goalText = el('pre', { class: 'goal' });
  const goal = el('section', { class: 'goal-state' }, goalHeadingEl, goalText);
  root.replaceChildren(el('header', {}, title, file, budget), stages, goal, turns, result);
  return {
    goal,
    goalHeading: goalHeadingEl,
    goalText,
    budget,
    budgetText,
    presets,
    id,
    title,
    file,
    stages,
    turns,
    turnDoms: new Map(),
    result,
    resultTitle,
    resultText,
    spinner,
    buttons,
  };
}

function turnDom(d: Dom, t: TurnView): TurnDom {
  let td = d.turnDoms.get(t.key);
  if (td) return td;
  const heading = el('h3');
  const summary = el('summary');
  const thinkText = el('pre', { class: 'think-text' });
  const details = el('details', { class: 'think', 'data-key': t.key }, summary, thinkText);
  details.open = true;
  const body = el('div', { class: 'turn-body' });
  const section = el('section', { class: `turn turn-${t.turn}` }, heading, details, body);
  const created: TurnDom = {
    section,
    heading,
    details,
    summary,
    thinkText,
    parts: [],
    follow: true,
    userToggled: false,
    body,
    drawn: null,
    answer: null,
  };
  // A click on the summary is the user's choice; the assignments below are not.
  summary.addEventListener('click', () => {
    created.userToggled = true;
  });
  thinkText.addEventListener('scroll', () => {
    created.follow = atBottom(thinkText);
  });
  d.turnDoms.set(t.key, created);
  d.turns.append(section);
  td = created;
  return td;
}

function sameKind(a: TextPart, b: TextPart): boolean {
  return a.kind === b.kind && a.lang === b.lang;
}

/** Brings a think block's nodes to `parts`, touching only the parts that changed (normally the last one). */
function syncParts(td: TurnDom, parts: TextPart[]): void {
  const pre = td.thinkText;
  const old = td.parts;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const o = old[i];
    const node = pre.childNodes[i];
    if (o && node && o.kind === p.kind && o.lang === p.lang && o.text === p.text) continue;
    if (o && node && sameKind(o, p)) {
      const textNode = p.kind === 'prose' ? node : node.firstChild;
      if (textNode instanceof Text) {
        if (textNode.data !== p.text) {
          // Appending keeps a selection inside the text; a rewrite (a fence just opened) replaces it.
          if (p.text.startsWith(textNode.data)) textNode.appendData(p.text.slice(textNode.data.length));
          else textNode.data = p.text;
        }
        continue;
      }
    }
    const fresh =
      p.kind === 'code'
        ? el('code', { class: `fence${p.lang ? ` lang-${p.lang}` : ''}` }, p.text)
        : document.createTextNode(p.text);
    if (node) pre.replaceChild(fresh, node);
    else pre.append(fresh);
  }
  while (pre.childNodes.length > parts.length) pre.lastChild!.remove();
  td.parts = parts;
}

/** The candidate with the file's line numbers; lines Lean complained about are marked, the message under them. */
function candidate(t: TurnView, s: ViewState): HTMLElement | null {
  const a = t.attempt;
  if (!a?.code) return null;
  const { lineOf, context: inContext } = candidateLines(a.code, s.mode, s.target);
  const byLine = messagesByLine(a);
  const pre = el('pre', { class: 'candidate' });
  let context = 0;
  a.code.split('\n').forEach((line, i) => {
    const fileLine = lineOf(i + 1);
    const here = byLine.get(i + 1) ?? [];
    // The file's header and earlier declarations the candidate carries: folded into one line, unless Lean
    // complained about one of them.
    if (inContext(i + 1) && here.length === 0) {
      context++;
      return;
    }
    if (context) {
      pre.append(el('div', { class: 'line context' }, el('span', { class: 'ln' }, '…'), contextNote(context)));
      context = 0;
    }
    pre.append(
      el(
        'div',
        { class: here.some((m) => m.severity === 'error') ? 'line error-line' : 'line' },
        el('span', { class: 'ln' }, fileLine === undefined ? '' : String(fileLine)),
        visibleBreaks(line),
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

function contextNote(n: number): string {
  return `(${n} line${n === 1 ? '' : 's'} of the file's header and earlier declarations, checked with it)`;
}

/** The answer's last lean4 block when no proof could be taken from it (shown for inspection, not checked). */
function lastLeanBlock(response: string): string | null {
  const blocks = [...response.matchAll(/```lean4?\s*\n([\s\S]*?)(?:```|$)/g)];
  const last = blocks.at(-1)?.[1]?.trim();
  return last ? last : null;
}

function drawBody(td: TurnDom, t: TurnView, s: ViewState): void {
  const a = t.attempt;
  const drawnFrom = { attempt: a, stopped: t.stopped, target: s.target };
  const same =
    td.drawn &&
    td.drawn.attempt === drawnFrom.attempt &&
    td.drawn.stopped === drawnFrom.stopped &&
    td.drawn.target === drawnFrom.target;
  if (a) {
    if (same) return;
    td.drawn = drawnFrom;
    td.answer = null;
    const { lineOf, context } = candidateLines(a.code ?? '', s.mode, s.target);
    const v = verdictLabel(a, t, lineOf, context);
    const parts: HTMLElement[] = [];
    const format = formatLabel(a);
    if (format) parts.push(el('div', { class: `format ${a.verdict ? 'note' : 'bad'}` }, format));
    if (a.finishReason === 'length')
      parts.push(el('div', { class: 'cut bad' }, `Cut short: ${a.cut ?? 'the answer reached the token limit'}`));
    parts.push(el('div', { class: `verdict ${v.ok ? 'ok' : v.stopped ? 'stopped' : 'bad'}` }, v.text));
    const code = candidate(t, s);
    if (code) parts.push(code);
    else if (!v.stopped) {
      const block = lastLeanBlock(a.response);
      if (block) parts.push(el('div', { class: 'muted' }, "The answer's final Lean block (not checked):"));
      if (block) parts.push(el('pre', { class: 'candidate unchecked' }, visibleBreaks(block)));
    }
    if (a.errorGoal) {
      parts.push(
        el('div', { class: 'goal-heading' }, errorGoalHeading(lineOf(a.errorGoal.line))),
        el('pre', { class: 'goal' }, a.errorGoal.goals.join('\n\n')),
      );
    }
    td.body.replaceChildren(...parts);
    return;
  }
  // No attempt yet: the answer text streams (appended to one text node), or the turn was stopped.
  if (t.text && !td.answer) {
    td.answer = el('pre', { class: 'answer' });
    td.body.prepend(td.answer);
  }
  if (td.answer) {
    const node = td.answer.firstChild;
    if (node instanceof Text) {
      if (t.text.startsWith(node.data)) node.appendData(t.text.slice(node.data.length));
      else node.data = t.text;
    } else td.answer.append(t.text);
  }
  const stopped = stoppedLabel(t);
  let note = td.body.querySelector<HTMLElement>('.verdict.stopped');
  if (stopped && !note) {
    note = el('div', { class: 'verdict stopped' });
    td.body.append(note);
  }
  if (note) setText(note, stopped ?? '');
}

function drawTurn(d: Dom, t: TurnView, s: ViewState): void {
  const td = turnDom(d, t);
  setText(td.heading, turnLabel(t));
  const label = thinkLabel(t);
  show(td.details, label !== undefined);
  setText(td.summary, label ?? '');
  // Open while thinking, closed once the answer begins, unless the user chose.
  const open = t.thinkEnd === undefined;
  if (!td.userToggled && td.details.open !== open) td.details.open = open;
  syncParts(td, t.think ? splitFences(t.think) : [{ kind: 'prose', text: '…' }]);
  if (td.follow && td.details.open && !atBottom(td.thinkText)) td.thinkText.scrollTop = td.thinkText.scrollHeight;
  drawBody(td, t, s);
}

function drawResult(d: Dom, s: ViewState): void {
  const look = resultLook(s, Date.now());
  setClass(d.result, look.cls);
  setText(d.resultTitle, look.title);
  setText(d.resultText, look.text);
  show(d.spinner, look.spinning);
  for (const [k, node] of Object.entries(d.buttons)) show(node, look.buttons.includes(k as ResultButton));
}

function render(): void {
  scheduled = false;
  if (!state.id) return;
  if (!dom || dom.id !== state.id) dom = build(state.id);
  const follow = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  setText(dom.title, state.title);
  setText(dom.file, state.file);
  state.stages.forEach((text, i) => {
    const li = dom!.stages.children[i] as HTMLElement | undefined;
    if (li) setText(li, text);
    else dom!.stages.append(el('li', {}, text));
  });
  show(dom.stages, state.stages.length > 0);
  show(dom.goal, state.goal !== undefined);
  if (state.goal) {
    setText(dom.goalHeading, goalHeading(state.goal));
    setText(dom.goalText, state.goal.goals.join('\n\n') || 'No goals: the proof is complete here.');
  }
  const budget = state.nextBudget ?? state.budget;
  show(dom.budget, budget !== undefined);
  if (budget) {
    for (const [preset, b] of Object.entries(dom.presets))
      setClass(b, preset === budget.preset ? 'preset selected' : 'preset');
    setText(dom.budgetText, state.nextBudget ? `next proof: ${state.nextBudget.text}` : budget.text);
  }
  for (const t of state.turns) drawTurn(dom, t, state);
  drawResult(dom, state);
  if (follow && window.innerHeight + window.scrollY < document.body.scrollHeight - 40)
    window.scrollTo(0, document.body.scrollHeight);
}

function schedule(): void {
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(render);
  }
}

/** Agents' jobs, under the run: state, file, theorem and the latest word (kept apart from the run's state). */
function drawAgentJobs(jobs: AgentJob[]): void {
  let section = document.getElementById('agent-jobs');
  if (!section) {
    section = el('section', { id: 'agent-jobs', class: 'agent-jobs' });
    document.body.append(section);
  }
  section.replaceChildren(
    el('h3', {}, `Agent jobs (${jobs.length})`),
    el(
      'ul',
      {},
      ...jobs.map((j) =>
        el(
          'li',
          { class: `agent-job ${j.state}`, 'data-job': j.id },
          el('span', { class: 'state' }, j.state.replace('_', ' ')),
          ` ${j.kind} ${j.theorem ?? ''} in ${j.path}`,
          j.attempts.length ? ` · ${j.attempts.length} attempts` : '',
          j.appliedAt ? ' · applied' : j.problem && j.state !== 'proved' ? ` · ${j.problem}` : '',
        ),
      ),
    ),
  );
  section.hidden = jobs.length === 0;
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  if (event.data.type === 'agentJobs') {
    drawAgentJobs(event.data.jobs);
    return;
  }
  state = reduce(state, event.data);
  schedule();
});
// The elapsed time moves while a proof runs.
setInterval(() => {
  if (state.id && !state.result && !state.error) schedule();
}, 1000);
vscode.postMessage({ type: 'ready' });
