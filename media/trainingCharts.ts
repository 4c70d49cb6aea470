// A Training charts editor panel: the step metrics of one run (or a comparison of runs) as uPlot charts at the
// panel's full width, kept live by the host. Legends always show values: the newest step's when the pointer is
// not over a chart, the hovered step's while it is.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './trainingCharts.css';
import type { FromCharts, ToCharts } from './trainingChartsMessages';
import { CHARTS, comparisonData, emptyMonitor, latestIndex, reduceMonitor } from './trainingMonitorState';

declare function acquireVsCodeApi(): { postMessage(message: FromCharts): void };
const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;
const state = emptyMonitor();
let runIds: string[] = [];
const charts = new Map<string, { plot: uPlot; labels: string }>();
let scheduled = false;

const COLORS = ['#4e9de0', '#e0a84e', '#5fb96a', '#d0605e', '#a07ed8', '#4ec9c0', '#c9c94e', '#d47fb4'];
const CHART_HEIGHT = 240;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

const header = el('header', {}, el('h1'), el('div', { class: 'muted status' }));
const grid = el('section', { class: 'grid' });
const empty = el('p', { class: 'muted empty' }, 'No metrics yet: the charts fill in as steps finish.');
root.replaceChildren(header, grid, empty);

function width(): number {
  return Math.max(320, grid.clientWidth - 16);
}

const hovering = (u: uPlot): boolean => u.cursor.idx !== null && u.cursor.idx !== undefined;

/** Fills the legend with the newest values whenever the pointer is not on the chart. */
function showLatest(u: uPlot): void {
  if (!hovering(u)) u.setLegend({ idx: latestIndex(u.data as never) }, false);
}

/**
 * A series' newest value at or before `idx`: the series of one chart come from different reports (the trainer's
 * step metrics, the reward service's), so at the newest step one of them may not have arrived yet.
 */
function newestAtOrBefore(series: (number | null)[] | undefined, idx: number | null): number | null {
  for (let i = Math.min(idx ?? Infinity, (series?.length ?? 0) - 1); i >= 0; i--) {
    const v = series![i];
    if (v !== null && v !== undefined) return v;
  }
  return null;
}

function draw(): void {
  scheduled = false;
  const runs = runIds.map((id) => state.runs.find((r) => r.id === id) ?? { id, name: id, state: 'unknown', step: 0 });
  const title = header.querySelector('h1')!;
  title.textContent = runs.length === 1 ? `Training: ${runs[0].name}` : `Training: ${runs.length} runs compared`;
  header.querySelector('.status')!.textContent = [
    runs.map((r) => `${r.name}: ${r.state}${'step' in r && r.step ? `, step ${r.step}` : ''}`).join(' · '),
    state.connection === 'connected' ? 'live' : state.connection,
  ]
    .filter(Boolean)
    .join(' · ');
  let any = false;
  for (const chart of CHARTS) {
    const d = comparisonData(state, runs, chart);
    const slotId = `chart-${chart.id}`;
    let slot = document.getElementById(slotId);
    if (!d) {
      slot?.remove();
      charts.get(chart.id)?.plot.destroy();
      charts.delete(chart.id);
      continue;
    }
    any = true;
    if (!slot) {
      slot = el('div', { class: 'chart', id: slotId, 'data-chart': chart.id });
      grid.append(slot);
    }
    const existing = charts.get(chart.id);
    const labels = d.labels.join('|');
    if (existing && existing.labels === labels) {
      existing.plot.setData(d.data as uPlot.AlignedData);
      showLatest(existing.plot);
      continue;
    }
    existing?.plot.destroy();
    slot.replaceChildren();
    const plot = new uPlot(
      {
        title: chart.title,
        width: width(),
        height: CHART_HEIGHT,
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false } },
        axes: [
          // steps are whole numbers: no 1.2, 1.4 … ticks between them
          {
            stroke: '#888',
            grid: { stroke: '#8883' },
            label: 'step',
            incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
          },
          { stroke: '#888', grid: { stroke: '#8883' }, size: 56 },
        ],
        series: [
          { label: 'step' },
          ...d.labels.map((label, i) => ({
            label,
            stroke: COLORS[i % COLORS.length],
            width: 2,
            points: { show: d.data[0].length < 40 },
            value: (u: uPlot, v: number | null, sidx: number, idx: number | null) => {
              const shown = v ?? (hovering(u) ? null : newestAtOrBefore(u.data[sidx] as (number | null)[], idx));
              return shown === null || shown === undefined ? '–' : formatValue(shown);
            },
          })),
        ],
        hooks: { setCursor: [showLatest], ready: [showLatest] },
      },
      d.data as uPlot.AlignedData,
      slot,
    );
    charts.set(chart.id, { plot, labels });
  }
  empty.hidden = any;
}

function formatValue(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(draw);
}

window.addEventListener('message', (event: MessageEvent<ToCharts>) => {
  const m = event.data;
  if (m.type === 'show') runIds = m.runIds;
  else reduceMonitor(state, m);
  schedule();
});
window.addEventListener('resize', () => {
  for (const c of charts.values()) c.plot.setSize({ width: width(), height: CHART_HEIGHT });
});
vscode.postMessage({ type: 'ready' });
