// The Markdown report: the headline table in the style of the Kimina-Prover-RL release
// (model | pass@N | pass@N + 1 error-fix turn), then the curves, sources, errors and speed.
import type { EvalComparison, EvalReport, KValue, VerdictMode } from '../protocol';
import { benchmarkName } from './comparable';
import { DEFAULT_VERDICT_MODE, verdictModeRules } from '../lean/verdictModes';
import { modesHeadlineFirst, otherModes } from './modes';

export const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? '—' : `${(100 * x).toFixed(2)} %`;
const num = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined ? '—' : x.toFixed(digits);
const at = (curve: KValue[] | null, k: number): number | null => curve?.find((p) => p.k === k)?.value ?? null;

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** k values worth a column: powers of two up to n, and n. */
function reportKs(n: number): number[] {
  const ks: number[] = [];
  for (let k = 1; k < n; k *= 2) ks.push(k);
  if (n >= 1) ks.push(n);
  return ks;
}

/** Published miniF2F-test figures (Kimina-Prover-RL blog table), for context under a miniF2F-test run. */
const published: [string, string, string][] = [
  ['Kimina-Prover-Distill-1.7B', '72.95 %', '75.41 %'],
  ['Kimina-Prover-RL-1.7B', '76.23 %', '77.87 %'],
  ['Kimina-Prover-Distill-0.6B', '68.85 %', '—'],
  ['Kimina-Prover-RL-0.6B', '71.30 %', '—'],
];

function isMiniF2FTest(report: EvalReport): boolean {
  return /minif2f/i.test(report.run.config.benchmark) && report.run.config.split === 'test';
}

export function reportMarkdown(report: EvalReport): string {
  const { run, metrics: m } = report;
  const c = run.config;
  const n = m.samples;
  const fix = c.fixTurns > 0;
  const out: string[] = [];
  out.push(`# Evaluation \`${run.name}\``, '');
  const mode = c.verdictMode ?? DEFAULT_VERDICT_MODE;
  out.push(
    `- Benchmark: **${c.benchmarkName ?? benchmarkName(c.benchmark)}** (\`${c.benchmark}\`)${c.split ? `, split ${c.split}` : ''}: ${m.problems} problems measured, ${run.complete} of ${run.problems} complete`,
  );
  out.push(
    `- Lean: ${c.lean ?? 'unknown (set KIMINA_LEAN_PROJECT to a project with a lean-toolchain file)'}; verdict mode: **${mode}**${verdictModeRules[mode].reportNote}; goal states in fix feedback: ${c.goals ? 'yes' : 'no'}`,
  );
  if (report.comparability)
    out.push(
      `- Comparable to the published table: **${report.comparability.comparable ? 'yes' : 'no'}** (${report.comparability.why})`,
    );
  out.push(
    `- Model: \`${c.model}\` on the ${c.engine} engine; ${c.samples} samples per problem, ${c.fixTurns} error-fix turn${c.fixTurns === 1 ? '' : 's'}`,
  );
  out.push(
    `- Sampling: temperature ${c.temperature}, top-p ${c.topP}, at most ${c.maxTokens} tokens; Lean timeout ${c.leanTimeout} s`,
  );
  if (run.complete < run.problems)
    out.push(
      `- **Partial run**: ${run.problems - run.complete} problems still lack samples; rerun the same command to finish them.`,
    );
  out.push('');

  out.push('## Results', '');
  const head = ['Model', 'Verdict', `pass@${n}`, ...(fix ? [`pass@${n} + 1 error-fix turn`] : [])];
  // One row per mode the run was judged by, the headline's first; the default mode's figures are the top-level ones.
  const figures = (k: VerdictMode) =>
    k === DEFAULT_VERDICT_MODE ? { passAtK: m.passAtK, passAtKWithFix: m.passAtKWithFix } : m.modes?.[k];
  out.push(
    table(
      head,
      modesHeadlineFirst(mode)
        .filter((k) => figures(k))
        .map((k) => [
          `\`${c.model}\``,
          `${k}${k === mode ? ' (headline)' : ''}`,
          pct(at(figures(k)!.passAtK, n)),
          ...(fix ? [pct(at(figures(k)!.passAtKWithFix, n))] : []),
        ]),
    ),
  );
  out.push('');
  const base = verdictModeRules[DEFAULT_VERDICT_MODE];
  for (const other of otherModes()) {
    const figs = m.modes?.[other];
    if (!figs) continue;
    const rule = verdictModeRules[other];
    const only = report.onlyAcceptedBy?.[other] ?? [];
    out.push(
      `The ${rule.name} (${rule.by}: ${rule.criteria}) accepts ${only.length} answer${only.length === 1 ? '' : 's'} the ${base.name} refuses${figs.unknown ? `; ${figs.unknown} answers never reached Lean (refused by our filter) and count as not valid under both` : ''}.`,
      '',
    );
    if (only.length) {
      out.push(`<details><summary>Answers only the ${rule.name} accepts</summary>`, '');
      out.push(
        table(
          ['Problem', 'Sample', 'Turn', `Why the ${base.name} refused it`],
          only.map((o) => [
            `\`${o.problem}\``,
            String(o.sample),
            String(o.turn),
            o.reason.replace(/\|/g, '\\|').replace(/\n/g, ' '),
          ]),
        ),
      );
      out.push('', '</details>', '');
    }
  }
  if (isMiniF2FTest(report)) {
    out.push('Published miniF2F-test figures (Kimina-Prover-RL blog table; its text gives RL-1.7B as 76.63 %):', '');
    out.push(
      table(
        ['Model', 'pass@32', 'pass@32 + 1 error-fix turn'],
        published.map((r) => [...r]),
      ),
    );
    out.push('');
  }

  out.push('## pass@k', '');
  const ks = reportKs(n);
  const rows: string[][] = [['pass@k (unbiased)', ...ks.map((k) => pct(at(m.passAtK, k)))]];
  if (fix) {
    rows.push(['pass@k + error-fix turn', ...ks.map((k) => pct(at(m.passAtKWithFix, k)))]);
    rows.push(['same budget: k/2 answers + k/2 fixes', ...ks.map((k) => pct(at(m.passAtKFixEqualBudget, k)))]);
  }
  rows.push(['best@k (verl bootstrap)', ...ks.map((k) => pct(at(m.bestAtK, k)))]);
  if (fix) rows.push(['best@k + error-fix turn (verl acc_turn_2)', ...ks.map((k) => pct(at(m.bestAtKWithFix, k)))]);
  out.push(table(['', ...ks.map((k) => `k=${k}`)], rows));
  out.push(
    '',
    'pass@k is the unbiased estimator 1 − C(n−c, k)/C(n, k). best@k is verl\'s bootstrap (1000 resamples with replacement, seed 42), so it sits below pass@k; use it to compare with training curves. "+ error-fix turn" counts a sample when its first answer or its one fix is valid (up to 2k generations); "same budget" spends k generations in total.',
    '',
  );

  out.push('## Solved by source', '');
  out.push(
    table(
      ['Source', 'Problems', 'Solved', 'Share', ...(fix ? ['Solved with fix', 'Share with fix'] : [])],
      m.bySource.map((s) => [
        s.source,
        String(s.problems),
        String(s.solved),
        pct(s.solved / s.problems),
        ...(fix ? [String(s.solvedWithFix), pct((s.solvedWithFix ?? 0) / s.problems)] : []),
      ]),
    ),
  );
  out.push('');

  out.push('## Answers', '');
  const errors = [...new Set([...Object.keys(m.formatErrors.turn1), ...Object.keys(m.formatErrors.turn2 ?? {})])];
  out.push(
    table(
      ['Format check', 'First answers', ...(fix ? ['Fix turns'] : [])],
      errors.map((e) => [e, pct(m.formatErrors.turn1[e] ?? 0), ...(fix ? [pct(m.formatErrors.turn2?.[e] ?? 0)] : [])]),
    ),
  );
  out.push('');
  out.push(
    table(
      ['Lean verdict', fix ? 'Share of answers (both turns)' : 'Share of answers'],
      Object.entries(m.verdicts).map(([k, v]) => [k, pct(v)]),
    ),
  );
  out.push('');

  out.push('## Speed', '');
  out.push(
    table(
      ['Measure', 'Value'],
      [
        ['Mean response length', `${num(m.meanResponseTokens, 0)} tokens, ${num(m.meanResponseChars, 0)} characters`],
        ['Throughput (all answers over wall time)', `${num(m.tokensPerSecond)} tokens/s`],
        ['Per-sequence decode speed', `${num(m.tokensPerSecondPerSequence)} tokens/s`],
        [
          'Lean time per check (mean / median)',
          m.leanSecondsPerCheck
            ? `${num(m.leanSecondsPerCheck.mean, 2)} s / ${num(m.leanSecondsPerCheck.median, 2)} s`
            : '—',
        ],
        [
          'Verifier wall time per check',
          m.verifySecondsPerCheck === null ? '—' : `${num(m.verifySecondsPerCheck, 2)} s`,
        ],
        ['Wall time of the run', `${num(run.wallSeconds, 0)} s`],
      ],
    ),
  );
  out.push('');

  out.push('## Problems', '', '<details><summary>Valid samples per problem</summary>', '');
  out.push(
    table(
      ['Problem', 'Source', 'Valid first answers', ...(fix ? ['Valid with fix'] : [])],
      report.problems.map((p) => [
        `\`${p.id}\``,
        p.source,
        `${p.correct}/${p.samples}`,
        ...(fix ? [`${p.correctWithFix ?? 0}/${p.samples}`] : []),
      ]),
    ),
  );
  out.push('', '</details>', '');
  return out.join('\n');
}

export function comparisonMarkdown(cmp: EvalComparison): string {
  const out: string[] = [];
  const a = `\`${cmp.a.name}\` (${cmp.a.config.model})`;
  const b = `\`${cmp.b.name}\` (${cmp.b.config.model})`;
  out.push(`# Comparison: ${cmp.a.name} vs ${cmp.b.name}`, '');
  out.push(`- A: ${a}, ${cmp.a.config.samples} samples; B: ${b}, ${cmp.b.config.samples} samples`);
  const setup = (c: EvalComparison['a']['config']) =>
    `${c.benchmarkName ?? benchmarkName(c.benchmark)}, Lean ${c.lean ?? 'unknown'}, verdict ${c.verdictMode ?? DEFAULT_VERDICT_MODE}`;
  out.push(`- A on ${setup(cmp.a.config)}; B on ${setup(cmp.b.config)}`);
  out.push(`- ${cmp.common} problems measured by both; k up to ${cmp.k}`, '');
  out.push(
    table(
      ['', 'A', 'B', 'B − A'],
      cmp.passAtK
        .filter((p) => reportKs(cmp.k).includes(p.k))
        .map((p) => [
          `pass@${p.k}`,
          pct(p.a),
          pct(p.b),
          `${p.b - p.a >= 0 ? '+' : ''}${(100 * (p.b - p.a)).toFixed(2)} pts`,
        ]),
    ),
  );
  out.push(
    '',
    `Solved by both: ${cmp.both}; by neither: ${cmp.neither}; only A: ${cmp.onlyA.length}; only B: ${cmp.onlyB.length}.`,
    '',
  );
  if (cmp.onlyA.length) out.push(`Only A solves: ${cmp.onlyA.map((id) => `\`${id}\``).join(', ')}`, '');
  if (cmp.onlyB.length) out.push(`Only B solves: ${cmp.onlyB.map((id) => `\`${id}\``).join(', ')}`, '');
  out.push(`## Per-problem differences (pass@${cmp.k})`, '');
  if (cmp.changed.length === 0) out.push('No problem changed.');
  else
    out.push(
      table(
        ['Problem', 'Source', 'A correct', 'B correct', 'Change'],
        cmp.changed.map((d) => [
          `\`${d.id}\``,
          d.source,
          `${d.a.correct}/${d.a.samples}`,
          `${d.b.correct}/${d.b.samples}`,
          `${d.delta >= 0 ? '+' : ''}${(100 * d.delta).toFixed(1)} pts`,
        ]),
      ),
    );
  out.push('');
  return out.join('\n');
}
