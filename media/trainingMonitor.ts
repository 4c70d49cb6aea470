// The Training Monitor webview in the side bar: runs with their state and controls, a start form with presets,
// the selected run's live status (latest metrics, held-out pass@k against the base model), recent rollouts and
// GPU status. The charts open in an editor panel at full width (Open Charts, Compare Runs: trainingCharts.ts).
// Plain DOM; the host relays everything from the backend (see trainingMonitorMessages.ts).
import './trainingMonitor.css';
import type { TrainingRun } from '../backend/protocol';
import type { FromMonitor, ToMonitor } from './trainingMonitorMessages';
import {
  controlsFor,
  emptyMonitor,
  latestFormatErrors,
  latestMetrics,
  reduceMonitor,
  type MonitorState,
} from './trainingMonitorState';

declare function acquireVsCodeApi(): { postMessage(message: FromMonitor): void };
const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;
const state: MonitorState = emptyMonitor();
let scheduled = false;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

function button(label: string, onClick: () => void, cls = ''): HTMLButtonElement {
  const b = el('button', { class: cls, type: 'button' }, label);
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

const fmt = (v: number | undefined, digits = 3) =>
  v === undefined ? '–' : Number.isInteger(v) ? String(v) : v.toFixed(digits);

function header(): HTMLElement {
  const conn = el(
    'div',
    { class: `connection ${state.connection}` },
    {
      connecting: 'Connecting to the Kimina backend…',
      connected: 'Backend connected',
      disconnected: 'Backend disconnected: reconnecting…',
      'no-backend': 'No Kimina server attached',
    }[state.connection],
    state.connectionMessage ? ` (${state.connectionMessage})` : '',
  );
  const gpus = el('div', { class: 'gpus' });
  if (state.gpus) {
    if (!state.gpus.available) gpus.append(el('span', { class: 'muted' }, state.gpus.note ?? 'No GPU'));
    for (const g of state.gpus.gpus) {
      gpus.append(
        el(
          'div',
          { class: 'gpu' },
          `GPU ${g.index} ${g.name}: ${g.utilizationPct}% · ${(g.memoryUsedMb / 1024).toFixed(1)}/${(g.memoryTotalMb / 1024).toFixed(0)} GB`,
        ),
      );
    }
  }
  return el(
    'section',
    { class: 'header' },
    conn,
    gpus,
    state.error ? el('div', { class: 'error' }, state.error) : null,
  );
}

let form: { el: HTMLElement; presetsKey: string } | null = null;

/** The form is built once per preset list and kept across renders, so typing is never lost to a live update. */
function startForm(): HTMLElement {
  const presetsKey = state.presets.map((p) => p.name).join(',') + '|' + state.defaultModel;
  if (form && form.presetsKey === presetsKey) return form.el;
  form = { el: buildStartForm(), presetsKey };
  return form.el;
}

function buildStartForm(): HTMLElement {
  const model = el('input', {
    type: 'text',
    id: 'model',
    placeholder: 'AI-MO/Kimina-Prover-RL-1.7B or a folder',
    value: state.defaultModel,
  });
  const preset = el('select', { id: 'preset' });
  for (const p of state.presets) preset.append(el('option', { value: p.name, title: p.summary }, p.name));
  const idle = el('input', { type: 'checkbox', id: 'idle' });
  const winRate = el('input', { type: 'checkbox', id: 'winrate' });
  const form = el(
    'details',
    { class: 'start' },
    el('summary', {}, 'New run'),
    el('label', {}, 'Model ', model),
    el('label', {}, 'Preset ', preset),
    el('label', { class: 'check' }, idle, ' only when the GPUs are idle'),
    el(
      'label',
      {
        class: 'check',
        title:
          'Sample 4 answers per prompt with the current model first; drop prompts it wins over half the time, repeat the ones it never wins.',
      },
      winRate,
      ' skip prompts the model already solves (win-rate filter)',
    ),
    el(
      'div',
      { class: 'muted' },
      state.workspace
        ? `Prompts: theorems and sorries of ${state.workspace}, and your proof attempts`
        : 'Open a Lean workspace to train on its theorems',
    ),
    button(
      'Start',
      () =>
        vscode.postMessage({
          type: 'start',
          model: model.value.trim(),
          preset: preset.value as never,
          schedule: idle.checked ? 'when-idle' : 'now',
          winRateSamples: winRate.checked ? 4 : undefined,
        }),
      'primary',
    ),
  );
  if (state.runs.length === 0) form.setAttribute('open', '');
  return form;
}

function runRow(run: TrainingRun): HTMLElement {
  const row = el(
    'div',
    { class: `run ${run.id === state.selected ? 'selected' : ''}`, 'data-run': run.id },
    el('div', { class: 'run-title' }, el('span', { class: `state ${run.state}` }, run.state), ` ${run.name}`),
    el(
      'div',
      { class: 'muted' },
      `step ${run.step}/${run.hyper.maxSteps} · checkpoint ${run.checkpointStep} · ${run.gpus === 'cpu' ? 'CPU' : `GPU ${run.gpus}`}${run.restarts ? ` · ${run.restarts} restarts` : ''}`,
    ),
  );
  const controls = el('div', { class: 'controls' });
  for (const action of controlsFor(run))
    controls.append(button(action, () => vscode.postMessage({ type: 'control', action, runId: run.id })));
  row.append(controls);
  row.addEventListener('click', () => vscode.postMessage({ type: 'select', runId: run.id }));
  return row;
}

function details(run: TrainingRun): HTMLElement {
  const box = el('section', { class: 'details' });
  if (run.error) box.append(el('pre', { class: 'error' }, run.error));
  if (run.baseEval) {
    const key =
      Object.keys(run.latestEval?.metrics ?? run.baseEval.metrics).find((k) => /^eval\/acc_turn_2\/pass@/.test(k)) ??
      Object.keys(run.baseEval.metrics).find((k) => /^eval\/acc_turn_1\/pass@/.test(k));
    if (key) {
      const label = key.replace(
        /^eval\/acc_turn_(\d)\/pass@(\d+)$/,
        (_, t, k) => `held-out pass@${k}${t === '2' ? ' with fix turn' : ''}`,
      );
      box.append(
        el(
          'div',
          { class: 'eval' },
          `${label}: base ${fmt(run.baseEval.metrics[key])} → step ${run.latestEval?.step ?? 0}: ${fmt(run.latestEval?.metrics[key])}`,
          run.improved === true
            ? el('span', { class: 'better' }, ' better')
            : run.improved === false
              ? el('span', { class: 'muted' }, ' not better')
              : null,
        ),
      );
    }
  }
  if (run.state === 'completed' && run.improved && run.finalDir) {
    box.append(
      button(
        run.onnxDir ? 'Use this model for proving' : 'Export to ONNX and use for proving',
        () => vscode.postMessage({ type: 'useModel', runId: run.id }),
        'primary',
      ),
    );
  }
  const errors = latestFormatErrors(state, run.id);
  if (errors.length) {
    box.append(
      el('div', { class: 'subtitle' }, 'Format errors (latest step)'),
      el('ul', { class: 'format-errors' }, ...errors.slice(0, 5).map((e) => el('li', {}, `${e.count} × ${e.text}`))),
    );
  }
  return box;
}

function rolloutList(runId: string): HTMLElement {
  const list = el('section', { class: 'rollouts' }, el('div', { class: 'subtitle' }, 'Recent rollouts'));
  const rollouts = state.rollouts.get(runId) ?? [];
  if (!rollouts.length) list.append(el('div', { class: 'muted' }, 'None yet.'));
  for (const r of rollouts.slice(0, 8)) {
    const verdict = r.verdict ?? 'not checked';
    list.append(
      el(
        'details',
        { class: 'rollout', 'data-key': `rollout-${r.id}` },
        el(
          'summary',
          {},
          el('span', { class: `score s${r.score}` }, r.score >= 1 ? '✔' : '✘'),
          ` step ${r.step} · ${r.purpose}${r.turn > 1 ? ' · fix turn' : ''} · ${verdict}${r.formatError !== 'NONE' ? ` · ${r.formatError}` : ''}`,
        ),
        el('div', { class: 'label' }, 'Thinking'),
        el('pre', { class: 'think' }, r.think.slice(0, 4000) || '(none)'),
        el('div', { class: 'label' }, 'Checked code'),
        el('pre', { class: 'code' }, r.code ?? '(no proof could be extracted)'),
      ),
    );
  }
  return list;
}

function logBox(runId: string): HTMLElement {
  const lines = (state.logs.get(runId) ?? []).slice(-8);
  return el(
    'details',
    { class: 'log', 'data-key': 'log' },
    el('summary', {}, 'Log'),
    el('pre', {}, lines.map((l) => `${l.at.slice(11, 19)} ${l.message}`).join('\n')),
  );
}

/** The selected run's latest values, and the buttons that open its charts in the editor area. */
function liveStatus(run: TrainingRun): HTMLElement {
  const box = el('section', { class: 'live' }, el('div', { class: 'subtitle' }, 'Latest step'));
  const latest = latestMetrics(state, run.id);
  if (!latest.length) box.append(el('div', { class: 'muted' }, 'No finished step yet.'));
  else
    box.append(
      el(
        'table',
        { class: 'latest' },
        ...latest.map((m) => el('tr', {}, el('td', {}, m.label), el('td', { class: 'value' }, fmt(m.value)))),
      ),
    );
  const others = state.runs.filter((r) => r.id !== run.id);
  box.append(
    el(
      'div',
      { class: 'chart-buttons' },
      button('Open Charts', () => vscode.postMessage({ type: 'openCharts', runIds: [run.id] }), 'primary open-charts'),
      others.length
        ? button('Compare Runs…', () => vscode.postMessage({ type: 'compareRuns', runId: run.id }), 'compare-runs')
        : null,
    ),
  );
  return box;
}

function render(): void {
  scheduled = false;
  const run = state.runs.find((r) => r.id === state.selected) ?? null;
  const runs = el('section', { class: 'runs' }, el('div', { class: 'subtitle' }, 'Runs'), ...state.runs.map(runRow));
  if (!state.runs.length) runs.append(el('div', { class: 'muted' }, 'No runs yet.'));
  const parts: Node[] = [header(), startForm(), runs];
  if (run) parts.push(details(run), liveStatus(run), rolloutList(run.id), logBox(run.id));
  // Keep what the user opened (rollouts, log) open across re-renders.
  const opened = new Set(
    [...root.querySelectorAll<HTMLDetailsElement>('details[data-key]')].filter((d) => d.open).map((d) => d.dataset.key),
  );
  root.replaceChildren(...parts);
  for (const d of root.querySelectorAll<HTMLDetailsElement>('details[data-key]'))
    if (opened.has(d.dataset.key)) d.open = true;
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(render);
}

window.addEventListener('message', (event: MessageEvent<ToMonitor>) => {
  reduceMonitor(state, event.data);
  schedule();
});
vscode.postMessage({ type: 'ready' });
