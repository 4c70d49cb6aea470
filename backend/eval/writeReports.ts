// Writes a run's report files: report.md, report.json, pass-at-k.{svg,png}, by-source.{svg,png};
// and a comparison's compare.md, compare.json, compare-pass-at-k.{svg,png}.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EvalComparison, EvalReport } from '../protocol';
import { comparisonMarkdown, reportMarkdown } from './markdown';
import { bySourceSvg, comparisonSvg, passAtKSvg, svgToPng } from './plots';

function writeAll(dir: string, files: Record<string, string | Buffer>): string[] {
  mkdirSync(dir, { recursive: true });
  return Object.entries(files).map(([name, content]) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  });
}

export function writeReport(report: EvalReport, dir: string): string[] {
  const passSvg = passAtKSvg(report);
  const sourceSvg = bySourceSvg(report);
  return writeAll(dir, {
    'report.md': reportMarkdown(report),
    'report.json': JSON.stringify(report, null, 2) + '\n',
    'pass-at-k.svg': passSvg,
    'pass-at-k.png': svgToPng(passSvg),
    'by-source.svg': sourceSvg,
    'by-source.png': svgToPng(sourceSvg),
  });
}

export function writeComparison(cmp: EvalComparison, dir: string): string[] {
  const svg = comparisonSvg(cmp);
  return writeAll(dir, {
    'compare.md': comparisonMarkdown(cmp),
    'compare.json': JSON.stringify(cmp, null, 2) + '\n',
    'compare-pass-at-k.svg': svg,
    'compare-pass-at-k.png': svgToPng(svg),
  });
}
