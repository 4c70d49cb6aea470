// The report's plots: pass@k against k, and solved problems per source; SVG, and PNG via resvg.
import { Resvg } from '@resvg/resvg-js';
import type { EvalComparison, EvalReport } from '../protocol';
import { barChartSvg, lineChartSvg, palette, type Series } from './svg';

export function passAtKSvg(report: EvalReport): string {
  const m = report.metrics;
  const series: Series[] = [
    { name: 'pass@k', points: m.passAtK.map((p) => ({ x: p.k, y: p.value })), color: palette[0] },
  ];
  if (m.passAtKWithFix)
    series.push({
      name: 'pass@k + fix turn',
      points: m.passAtKWithFix.map((p) => ({ x: p.k, y: p.value })),
      color: palette[1],
    });
  if (m.passAtKFixEqualBudget)
    series.push({
      name: 'k/2 answers + k/2 fixes',
      points: m.passAtKFixEqualBudget.map((p) => ({ x: p.k, y: p.value })),
      color: palette[2],
      dashed: true,
    });
  series.push({
    name: 'best@k (verl)',
    points: m.bestAtK.map((p) => ({ x: p.k, y: p.value })),
    color: palette[3],
    dashed: true,
  });
  const xLabel = m.passAtKFixEqualBudget
    ? 'k (samples per problem; generations for k/2 answers + k/2 fixes)'
    : 'k (samples per problem)';
  return lineChartSvg({
    title: `${report.run.name}: pass@k (${m.problems} problems)`,
    xLabel,
    yLabel: 'share of problems solved',
    series,
    logX: true,
    yMax: 1,
  });
}

export function bySourceSvg(report: EvalReport): string {
  const rows = report.metrics.bySource;
  const series = [{ name: 'solved', values: rows.map((r) => r.solved), color: palette[0] }];
  if (report.run.config.fixTurns > 0)
    series.push({ name: 'solved with fix', values: rows.map((r) => r.solvedWithFix ?? 0), color: palette[1] });
  return barChartSvg({
    title: `${report.run.name}: solved by source (pass@${report.metrics.samples})`,
    yLabel: 'problems',
    categories: rows.map((r) => r.source),
    series,
    totals: rows.map((r) => r.problems),
  });
}

export function comparisonSvg(cmp: EvalComparison): string {
  return lineChartSvg({
    title: `pass@k: ${cmp.a.name} vs ${cmp.b.name} (${cmp.common} problems)`,
    xLabel: 'k (samples per problem)',
    yLabel: 'share of problems solved',
    logX: true,
    yMax: 1,
    series: [
      { name: `A: ${cmp.a.name}`, points: cmp.passAtK.map((p) => ({ x: p.k, y: p.a })), color: palette[0] },
      { name: `B: ${cmp.b.name}`, points: cmp.passAtK.map((p) => ({ x: p.k, y: p.b })), color: palette[1] },
    ],
  });
}

/** Renders an SVG to PNG with the system's fonts (text is left out where none are installed). */
export function svgToPng(svg: string): Buffer {
  const resvg = new Resvg(svg, {
    background: '#ffffff',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
    fitTo: { mode: 'zoom', value: 1.5 },
  });
  return Buffer.from(resvg.render().asPng());
}
