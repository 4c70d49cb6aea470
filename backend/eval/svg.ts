// Small SVG charts for reports: a line chart (pass@k against k) and a grouped bar chart (solved
// problems per source). Plain SVG text, so the same file renders in browsers, Markdown and resvg.

export interface Series {
  name: string;
  points: { x: number; y: number }[];
  color: string;
  dashed?: boolean;
}
export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  logX?: boolean;
  yMax?: number;
}
export interface BarChart {
  title: string;
  yLabel: string;
  categories: string[];
  series: { name: string; values: number[]; color: string }[];
  totals?: number[];
}

const W = 720;
const H = 440;
const M = { left: 70, right: 200, top: 48, bottom: 60 };
const font = 'DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif';

export const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const f = (x: number): string => (Math.round(x * 100) / 100).toString();

function text(
  x: number,
  y: number,
  s: string,
  opts: { anchor?: string; size?: number; weight?: string; rotate?: boolean } = {},
): string {
  const rot = opts.rotate ? ` transform="rotate(-90 ${f(x)} ${f(y)})"` : '';
  return `<text x="${f(x)}" y="${f(y)}" font-family="${font}" font-size="${opts.size ?? 12}" text-anchor="${opts.anchor ?? 'middle'}"${opts.weight ? ` font-weight="${opts.weight}"` : ''} fill="#222"${rot}>${esc(s)}</text>`;
}

function frame(title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    text(W / 2, 28, title, { size: Math.min(16, Math.floor((W - 24) / (0.62 * title.length))), weight: 'bold' }),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function niceStep(range: number, target: number): number {
  const raw = range / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const n = raw / mag;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

function legend(entries: { name: string; color: string; dashed?: boolean; bar?: boolean }[]): string[] {
  const x = W - M.right + 16;
  return entries.flatMap((e, i) => {
    const y = M.top + 10 + i * 22;
    const mark = e.bar
      ? `<rect x="${x}" y="${y - 8}" width="18" height="12" fill="${e.color}" stroke="#999" stroke-width="0.5"/>`
      : `<line x1="${x}" y1="${y - 2}" x2="${x + 18}" y2="${y - 2}" stroke="${e.color}" stroke-width="2.5"${e.dashed ? ' stroke-dasharray="6 4"' : ''}/>`;
    return [mark, text(x + 24, y + 2, e.name, { anchor: 'start', size: 11 })];
  });
}

export function lineChartSvg(chart: LineChart): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const all = chart.series.flatMap((s) => s.points);
  const xs = all.map((p) => p.x);
  const tx = (x: number) => (chart.logX ? Math.log2(x) : x);
  const x0 = xs.length ? tx(Math.min(...xs)) : 0;
  const x1raw = xs.length ? tx(Math.max(...xs)) : 1;
  const x1 = x1raw > x0 ? x1raw : x0 + 1;
  const yMax = chart.yMax ?? Math.max(1e-9, ...all.map((p) => p.y));
  const px = (x: number) => M.left + ((tx(x) - x0) / (x1 - x0)) * pw;
  const py = (y: number) => M.top + ph - (y / yMax) * ph;
  const body: string[] = [];
  const yStep = niceStep(yMax, 5);
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    body.push(`<line x1="${M.left}" y1="${f(py(y))}" x2="${M.left + pw}" y2="${f(py(y))}" stroke="#e3e3e3"/>`);
    body.push(
      text(M.left - 8, py(y) + 4, chart.yMax === 1 ? `${Math.round(y * 100)}%` : f(y), { anchor: 'end', size: 11 }),
    );
  }
  const ticks = chart.logX
    ? Array.from({ length: Math.floor(x1) - Math.ceil(x0) + 1 }, (_, i) => 2 ** (Math.ceil(x0) + i))
    : Array.from(new Set(xs)).sort((a, b) => a - b);
  for (const t of ticks) {
    body.push(`<line x1="${f(px(t))}" y1="${M.top}" x2="${f(px(t))}" y2="${M.top + ph}" stroke="#f0f0f0"/>`);
    body.push(text(px(t), M.top + ph + 18, String(t), { size: 11 }));
  }
  body.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  for (const s of chart.series) {
    if (s.points.length === 0) continue;
    const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${f(px(p.x))} ${f(py(p.y))}`).join(' ');
    body.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    for (const p of s.points) body.push(`<circle cx="${f(px(p.x))}" cy="${f(py(p.y))}" r="3" fill="${s.color}"/>`);
  }
  body.push(text(M.left + pw / 2, H - 16, chart.xLabel, { size: 13 }));
  body.push(text(20, M.top + ph / 2, chart.yLabel, { size: 13, rotate: true }));
  body.push(...legend(chart.series));
  return frame(chart.title, body);
}

export function barChartSvg(chart: BarChart): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const top = Math.max(1, ...(chart.totals ?? []), ...chart.series.flatMap((s) => s.values));
  const yMax = top * 1.08; // headroom for the labels above the tallest bar
  const py = (y: number) => M.top + ph - (y / yMax) * ph;
  const body: string[] = [];
  const yStep = Math.max(1, niceStep(yMax, 5));
  for (let y = 0; y <= top + 1e-9; y += yStep) {
    body.push(`<line x1="${M.left}" y1="${f(py(y))}" x2="${M.left + pw}" y2="${f(py(y))}" stroke="#e3e3e3"/>`);
    body.push(text(M.left - 8, py(y) + 4, String(Math.round(y)), { anchor: 'end', size: 11 }));
  }
  const slot = pw / Math.max(1, chart.categories.length);
  const groupW = slot * 0.72;
  const barW = groupW / Math.max(1, chart.series.length);
  chart.categories.forEach((cat, i) => {
    const gx = M.left + i * slot + (slot - groupW) / 2;
    const total = chart.totals?.[i];
    if (total !== undefined) {
      body.push(
        `<rect x="${f(gx)}" y="${f(py(total))}" width="${f(groupW)}" height="${f(M.top + ph - py(total))}" fill="#f4f4f4" stroke="#999" stroke-dasharray="3 2"/>`,
      );
      body.push(text(gx + groupW / 2, py(total) - 4, String(total), { size: 10 }));
    }
    chart.series.forEach((s, j) => {
      const v = s.values[i] ?? 0;
      body.push(
        `<rect x="${f(gx + j * barW)}" y="${f(py(v))}" width="${f(barW - 1)}" height="${f(M.top + ph - py(v))}" fill="${s.color}"/>`,
      );
    });
    // Two-word names go on two lines so neighbours never overlap.
    cat
      .split(' ')
      .forEach((word, line) =>
        body.push(text(M.left + i * slot + slot / 2, M.top + ph + 18 + line * 14, word, { size: 11 })),
      );
  });
  body.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  body.push(text(20, M.top + ph / 2, chart.yLabel, { size: 13, rotate: true }));
  body.push(
    ...legend([
      ...chart.series.map((s) => ({ name: s.name, color: s.color, bar: true })),
      ...(chart.totals ? [{ name: 'problems', color: '#f4f4f4', bar: true }] : []),
    ]),
  );
  return frame(chart.title, body);
}
