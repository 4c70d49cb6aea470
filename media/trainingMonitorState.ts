// The Training Monitor's state and chart data, as pure functions (unit-tested without a browser).
import type {
  GpuReport,
  RolloutSample,
  StepMetrics,
  TrainingLogLine,
  TrainingPresetName,
  TrainingRun,
} from '../backend/protocol';
import type { ConnectionStatus, ToMonitor } from './trainingMonitorMessages';

export interface MonitorState {
  connection: ConnectionStatus;
  connectionMessage?: string;
  presets: { name: TrainingPresetName; summary: string }[];
  defaultModel: string;
  workspace: string | null;
  runs: TrainingRun[];
  selected: string | null;
  /** Per run: step -> metrics, train and eval kept apart. */
  train: Map<string, Map<number, Record<string, number>>>;
  evals: Map<string, Map<number, Record<string, number>>>;
  rollouts: Map<string, RolloutSample[]>;
  logs: Map<string, TrainingLogLine[]>;
  gpus: GpuReport | null;
  error: string | null;
}

export const MAX_ROLLOUTS_SHOWN = 20;
const MAX_LOG_LINES = 200;

export function emptyMonitor(): MonitorState {
  return {
    connection: 'connecting',
    presets: [],
    defaultModel: '',
    workspace: null,
    runs: [],
    selected: null,
    train: new Map(),
    evals: new Map(),
    rollouts: new Map(),
    logs: new Map(),
    gpus: null,
    error: null,
  };
}

function mergeSteps(
  target: Map<string, Map<number, Record<string, number>>>,
  runId: string,
  steps: StepMetrics[],
  replace: boolean,
): void {
  const byStep = replace || !target.has(runId) ? new Map<number, Record<string, number>>() : target.get(runId)!;
  for (const s of steps) byStep.set(s.step, { ...(byStep.get(s.step) ?? {}), ...s.metrics });
  target.set(runId, byStep);
}

/** Applies one message from the host. Mutates and returns the state. */
export function reduceMonitor(state: MonitorState, m: ToMonitor): MonitorState {
  switch (m.type) {
    case 'connection':
      state.connection = m.status;
      state.connectionMessage = m.message;
      break;
    case 'presets':
      state.presets = m.presets;
      state.defaultModel = m.defaultModel;
      state.workspace = m.workspace;
      break;
    case 'runs':
      state.runs = m.runs;
      if (!state.selected || !m.runs.some((r) => r.id === state.selected)) state.selected = m.runs[0]?.id ?? null;
      break;
    case 'run': {
      const i = state.runs.findIndex((r) => r.id === m.run.id);
      if (i >= 0) state.runs[i] = m.run;
      else state.runs.unshift(m.run);
      state.selected ??= m.run.id;
      break;
    }
    case 'metrics': {
      mergeSteps(
        state.train,
        m.runId,
        m.steps.filter((s) => s.kind === 'train'),
        m.replace,
      );
      mergeSteps(
        state.evals,
        m.runId,
        m.steps.filter((s) => s.kind === 'eval'),
        m.replace,
      );
      break;
    }
    case 'rollouts': {
      const old = m.replace ? [] : (state.rollouts.get(m.runId) ?? []);
      const merged = [...m.rollouts, ...old].sort((a, b) => b.id - a.id);
      state.rollouts.set(
        m.runId,
        merged.filter((r, i) => merged.findIndex((x) => x.id === r.id) === i).slice(0, MAX_ROLLOUTS_SHOWN),
      );
      break;
    }
    case 'log': {
      const old = m.replace ? [] : (state.logs.get(m.runId) ?? []);
      state.logs.set(m.runId, [...old, ...m.lines].slice(-MAX_LOG_LINES));
      break;
    }
    case 'gpus':
      state.gpus = m.report;
      break;
    case 'error':
      state.error = m.message;
      break;
  }
  return state;
}

export interface ChartDef {
  id: string;
  title: string;
  kind: 'train' | 'eval';
  series: { key: string | RegExp; label: string }[];
}

/** The charts, grouped as ML users expect (training-recipe.md §10, ux-conventions.md §2.5). */
export const CHARTS: ChartDef[] = [
  {
    id: 'reward',
    title: 'Reward and accuracy',
    kind: 'train',
    series: [
      { key: 'reward', label: 'reward' },
      { key: 'acc/turn_1', label: 'acc turn 1' },
      { key: 'acc/turn_2', label: 'acc turn 2' },
    ],
  },
  {
    id: 'eval',
    title: 'Held-out pass@k',
    kind: 'eval',
    series: [
      { key: /^eval\/acc_turn_1\/pass@\d+$/, label: 'before fix' },
      { key: /^eval\/acc_turn_2\/pass@\d+$/, label: 'after fix turn' },
    ],
  },
  {
    id: 'format',
    title: 'Format error rate',
    kind: 'train',
    series: [
      { key: 'format_error_rate/turn_1', label: 'turn 1' },
      { key: 'format_error_rate/turn_2', label: 'turn 2' },
    ],
  },
  {
    id: 'length',
    title: 'Response length (tokens)',
    kind: 'train',
    series: [
      { key: 'completions/mean_length', label: 'mean' },
      { key: 'completions/max_length', label: 'max' },
    ],
  },
  {
    id: 'clipped',
    title: 'Clipped responses (share)',
    kind: 'train',
    series: [{ key: 'completions/clipped_ratio', label: 'clipped' }],
  },
  {
    id: 'loss',
    title: 'Policy loss',
    kind: 'train',
    series: [
      { key: 'policy_loss', label: 'policy loss' },
      { key: 'loss', label: 'loss' },
    ],
  },
  { id: 'grad', title: 'Grad norm', kind: 'train', series: [{ key: 'grad_norm', label: 'grad norm' }] },
  {
    id: 'entropy',
    title: 'Entropy and KL',
    kind: 'train',
    series: [
      { key: 'entropy', label: 'entropy' },
      { key: 'kl', label: 'KL' },
    ],
  },
  {
    id: 'throughput',
    title: 'Tokens per second',
    kind: 'train',
    series: [{ key: 'perf/tokens_per_s', label: 'tokens/s' }],
  },
  { id: 'steptime', title: 'Step time (s)', kind: 'train', series: [{ key: 'perf/time_per_step', label: 'seconds' }] },
  {
    id: 'memory',
    title: 'GPU memory (GB)',
    kind: 'train',
    series: [
      { key: 'perf/max_memory_allocated_gb', label: 'allocated' },
      { key: 'perf/max_memory_reserved_gb', label: 'reserved' },
    ],
  },
];

function pick(metrics: Record<string, number>, key: string | RegExp): number | null {
  if (typeof key === 'string') return key in metrics ? metrics[key] : null;
  const k = Object.keys(metrics).find((name) => key.test(name));
  return k === undefined ? null : metrics[k];
}

/** uPlot data for one chart: [steps, ...series]; series with no value at all are left out. */
export function chartData(
  state: MonitorState,
  runId: string,
  chart: ChartDef,
): { labels: string[]; data: (number | null)[][] } | null {
  const source = (chart.kind === 'eval' ? state.evals : state.train).get(runId);
  if (!source || source.size === 0) return null;
  const steps = [...source.keys()].sort((a, b) => a - b);
  const labels: string[] = [];
  const data: (number | null)[][] = [steps];
  for (const s of chart.series) {
    const values = steps.map((step) => pick(source.get(step)!, s.key));
    if (values.some((v) => v !== null)) {
      labels.push(s.label);
      data.push(values);
    }
  }
  return labels.length ? { labels, data } : null;
}

/** Format-error counts of the newest step that has any, biggest first (No error. excluded). */
export function latestFormatErrors(state: MonitorState, runId: string): { text: string; count: number }[] {
  const source = state.train.get(runId);
  if (!source) return [];
  const steps = [...source.keys()].sort((a, b) => b - a);
  for (const step of steps) {
    const entries = Object.entries(source.get(step)!).filter(([k]) => k.startsWith('format_error/turn_1/'));
    if (entries.length) {
      return entries
        .map(([k, v]) => ({ text: k.slice('format_error/turn_1/'.length), count: v }))
        .filter((e) => e.text !== 'No error.' && e.count > 0)
        .sort((a, b) => b.count - a.count);
    }
  }
  return [];
}

export function controlsFor(run: TrainingRun): ('pause' | 'resume' | 'cancel')[] {
  switch (run.state) {
    case 'queued':
    case 'running':
      return ['pause', 'cancel'];
    case 'preparing':
      return ['cancel'];
    case 'pausing':
      return ['cancel'];
    case 'paused':
    case 'failed':
      return ['resume', 'cancel'];
    default:
      return [];
  }
}

/**
 * One chart over several runs (a comparison): steps of every run on one axis, each run's series labelled with
 * the run's name; a run without the chart's metrics adds nothing. With one run it is chartData.
 */
export function comparisonData(
  state: MonitorState,
  runs: { id: string; name: string }[],
  chart: ChartDef,
): { labels: string[]; data: (number | null)[][] } | null {
  if (runs.length === 1) return chartData(state, runs[0].id, chart);
  const perRun = runs
    .map((r) => ({ run: r, d: chartData(state, r.id, chart) }))
    .filter((x): x is { run: { id: string; name: string }; d: NonNullable<ReturnType<typeof chartData>> } => !!x.d);
  if (!perRun.length) return null;
  const steps = [...new Set(perRun.flatMap((x) => x.d.data[0] as number[]))].sort((a, b) => a - b);
  const labels: string[] = [];
  const data: (number | null)[][] = [steps];
  for (const { run, d } of perRun) {
    const at = new Map((d.data[0] as number[]).map((step, i) => [step, i]));
    d.labels.forEach((label, k) => {
      labels.push(`${run.name}: ${label}`);
      data.push(steps.map((step) => (at.has(step) ? d.data[k + 1][at.get(step)!] : null)));
    });
  }
  return { labels, data };
}

/** Per series, the index of its newest value (what a legend shows when the pointer is not over the chart). */
export function latestIndex(data: (number | null)[][]): number {
  for (let i = (data[0]?.length ?? 0) - 1; i >= 0; i--) if (data.slice(1).some((s) => s[i] !== null)) return i;
  return Math.max(0, (data[0]?.length ?? 1) - 1);
}

/** The newest value of each chart series of a run (the side bar's live status), in the charts' order. */
export function latestMetrics(state: MonitorState, runId: string): { label: string; value: number }[] {
  const out: { label: string; value: number }[] = [];
  for (const chart of CHARTS) {
    const d = chartData(state, runId, chart);
    if (!d) continue;
    d.labels.forEach((label, k) => {
      const series = d.data[k + 1];
      for (let i = series.length - 1; i >= 0; i--) {
        const v = series[i];
        if (v !== null) {
          out.push({ label: `${chart.title}: ${label}`, value: v });
          break;
        }
      }
    });
  }
  return out;
}
