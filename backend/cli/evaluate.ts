// `kimina eval`: run a model over a benchmark (resumable), report pass@k, compare two runs, fetch miniF2F.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { engineKinds, isSet, type Settings } from '../settings/settings';
import { openApp, type App } from '../app/app';
import type { EvalStore } from '../store/eval';
import type { EvalConfig, EvalReport } from '../protocol';
import { flagNumber, flagString, parseArgs, type Parsed } from './args';
import { ProgressBar } from './progress';
import { loadBenchmark } from '../eval/benchmark';
import { statementProblems } from '../eval/statementCheck';
import { runEvaluation } from '../eval/runner';
import { buildReport } from '../eval/report';
import { compareReports } from '../eval/compare';
import { pct } from '../eval/markdown';
import { writeComparison, writeReport } from '../eval/writeReports';
import { describeCheck, fetchMiniF2F } from '../eval/fetch';
import { benchmarkName, leanVersionOf } from '../eval/comparable';
import { MINIF2F_TEST_REPO, defaultMinif2fTestPath, fetchMinif2fTest } from '../eval/recipeBenchmark';
import { BUILTIN_MINIF2F, resolveBenchmarkArg } from '../eval/builtin';
import {
  DEFAULT_VERDICT_MODE,
  parseVerdictMode,
  VERDICT_MODES,
  verdictModeChoice,
  verdictModeRules,
} from '../lean/verdictModes';
import { otherModes } from '../eval/modes';
import { proveAttempter } from '../eval/proveAttempt';

/** The modes the published Kimina-Prover-RL table's rule is (one today). */
const publishedModes = () => VERDICT_MODES.filter((m) => verdictModeRules[m].publishedRule).join('|');

const USAGE = `usage:
  kimina eval run BENCHMARK --model NAME [options]   evaluate (BENCHMARK: a folder of .lean files or a .jsonl,
                                                     or ${BUILTIN_MINIF2F}: the built-in miniF2F-lean4, 244 test +
                                                     244 valid, Lean v4.24.0 statements; not AI-MO/minif2f_test)
  kimina eval report RUN [--out DIR]                 write the report of a stored run
  kimina eval compare RUN_A RUN_B [--out DIR]        per-problem differences (runs or report.json files)
  kimina eval list                                   stored runs
  kimina eval delete RUN                             forget a run
  kimina eval fetch [--dest FILE]                    download ${MINIF2F_TEST_REPO}, the benchmark of the published
                                                     figures (244 problems with informal statements)
  kimina eval fetch minif2f [--dest DIR]             the Lean 4 miniF2F files instead (newer Lean, no informal statements)

run options:
  --engine ${engineKinds.join('|')}   engine (default $KIMINA_ENGINE, else openai)   --base-url URL  OpenAI server root
                         (default $KIMINA_OPENAI_BASE_URL or http://127.0.0.1:8000/v1)
  --samples N            samples per problem (default 32)     --fix-turns 0|1 error-fix turns (default 1)
  --split test|valid     keep one split                       --limit N       first N problems
  --problems a,b,c       only these problem ids               --run NAME      run name (default from model/benchmark)
  --parallel N           samples proved at once (default: the verifier's capacity, at most 64)
  --temperature T (1.0)  --top-p P (0.95)  --max-tokens N (24576)  --lean-timeout S (60)  --seed N
  --verdict ${verdictModeChoice()}  which verdict the headline uses (default ${DEFAULT_VERDICT_MODE}; ${publishedModes()} = the published
                         table's rule); every mode is measured and reported
  --goals                goal states (infotree) in the fix-turn feedback (the recipe had none; off by default)
  --out DIR              report folder (default kimina-eval/RUN)   --db PATH  store (default ~/.kimina/kimina.db)
  --keep-responses       store whole answers (large)
A rerun of the same command continues where the last one stopped.

fetch options: --dest (default ~/.kimina/benchmarks/minif2f_test.jsonl; minif2f: ~/.kimina/benchmarks/miniF2F-lean4)  --force
  minif2f only: --method git|archive|auto  --url URL  --ref REF
Reports name the benchmark, the Lean version (KIMINA_LEAN_PROJECT's lean-toolchain) and the verdict mode, and say
whether the figure is comparable to the published table (1.7B: 76.23 % pass@32, 77.87 % with the fix turn; 0.6B: 71.30 %).`;

/** The app of an eval command: the store at --db (else KIMINA_DB), and for `run` the engine the flags choose. */
function evalApp(p: Parsed, settings: Settings, engine?: Partial<Settings>): App {
  const db = flagString(p, 'db');
  return openApp({
    settings: { ...settings, ...(db ? { db: resolve(db) } : {}), ...engine },
    log: (line) => console.error(line),
  });
}

function intFlag(p: Parsed, name: string, fallback: number, min: number, max: number): number {
  const v = flagNumber(p, name) ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max)
    throw new Error(`--${name} must be a whole number from ${min} to ${max}, got ${v}`);
  return v;
}

function realFlag(p: Parsed, name: string, fallback: number, min: number, max: number): number {
  const v = flagNumber(p, name) ?? fallback;
  if (v < min || v > max) throw new Error(`--${name} must be from ${min} to ${max}, got ${v}`);
  return v;
}

function defaultRunName(
  model: string,
  benchmark: string,
  split: string | null,
  samples: number,
  fixTurns: number,
): string {
  const clean = (s: string) => s.replace(/[^\w.+-]+/g, '_').replace(/^_+|_+$/g, '') || 'x';
  return [
    clean(basename(model)),
    clean(basename(benchmark).replace(/\.jsonl$/, '')),
    split ? clean(split) : null,
    `n${samples}`,
    fixTurns ? 'fix' : null,
  ]
    .filter(Boolean)
    .join('-');
}

/** The summary `kimina eval run` and `report` print: the default mode's figures, then one line per other mode. */
export function headline(report: EvalReport): string[] {
  const m = report.metrics;
  const n = m.samples;
  const at = (c: { k: number; value: number }[] | null) => c?.find((x) => x.k === n)?.value ?? null;
  const lines = [`${report.run.name}: ${m.problems} problems, pass@${n} ${pct(at(m.passAtK))}`];
  if (m.passAtKWithFix) lines[0] += `, with one error-fix turn ${pct(at(m.passAtKWithFix))}`;
  if (m.passAtK.length) lines[0] += ` (pass@1 ${pct(m.passAtK[0].value)})`;
  lines[0] += ` under the ${verdictModeRules[DEFAULT_VERDICT_MODE].name}`;
  for (const mode of otherModes()) {
    const f = m.modes?.[mode];
    if (!f) continue;
    const rule = verdictModeRules[mode];
    lines.push(
      `${rule.name} (${rule.by}): pass@${n} ${pct(at(f.passAtK))}${f.passAtKWithFix ? `, with the fix turn ${pct(at(f.passAtKWithFix))}` : ''}; ${report.onlyAcceptedBy?.[mode]?.length ?? 0} answers only it accepts`,
    );
  }
  if (report.comparability)
    lines.push(
      `comparable to the published table: ${report.comparability.comparable ? 'yes' : 'no'} (${report.comparability.why})`,
    );
  if (report.run.complete < report.run.problems)
    lines.push(`partial: ${report.run.problems - report.run.complete} problems still lack samples`);
  return lines;
}

async function runCommand(p: Parsed, settings: Settings): Promise<number> {
  const benchmarkArg = p.positionals[1];
  if (!benchmarkArg)
    throw new Error(`kimina eval run needs a benchmark folder or .jsonl file (or ${BUILTIN_MINIF2F}, built in)`);
  const benchmark = resolveBenchmarkArg(benchmarkArg);
  const model = flagString(p, 'model');
  if (!model) throw new Error('kimina eval run needs --model NAME');
  const engineName = flagString(p, 'engine') ?? (isSet('engine', settings.childEnv) ? settings.engine : 'openai');
  if (!(engineKinds as readonly string[]).includes(engineName))
    throw new Error(`--engine must be one of ${engineKinds.join(', ')}, got '${engineName}'`);
  const split = flagString(p, 'split')?.toLowerCase() ?? null;
  const samples = intFlag(p, 'samples', 32, 1, 1024);
  const fixTurns = intFlag(p, 'fix-turns', 1, 0, 1);
  const only = flagString(p, 'problems')
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const limitRaw = flagNumber(p, 'limit');
  const loaded = loadBenchmark(resolve(benchmark), { split, only, limit: limitRaw });
  const bad = loaded.problems.flatMap((pr) => statementProblems(pr.code, pr.theorem).map((i) => `${pr.origin}: ${i}`));
  if (bad.length > 0)
    throw new Error(`the prover would not accept ${bad.length} statement(s):\n  ${bad.slice(0, 10).join('\n  ')}`);
  const config: EvalConfig = {
    benchmark: resolve(benchmark),
    split,
    model,
    engine: engineName,
    samples,
    fixTurns,
    temperature: realFlag(p, 'temperature', 1.0, 0, 2),
    topP: realFlag(p, 'top-p', 0.95, 0.01, 1),
    maxTokens: intFlag(p, 'max-tokens', 24576, 1, 131072),
    leanTimeout: realFlag(p, 'lean-timeout', 60, 1, 3600),
    verdictMode: parseVerdictMode(flagString(p, 'verdict')),
    benchmarkName: benchmarkName(benchmark),
    lean: leanVersionOf(settings.leanProject),
    goals: p.flags.has('goals'),
  };
  const runName = flagString(p, 'run') ?? defaultRunName(model, benchmark, split, samples, fixTurns);
  const seed = flagNumber(p, 'seed');
  const parallelFlag = flagNumber(p, 'parallel') !== undefined ? intFlag(p, 'parallel', 1, 1, 4096) : undefined;
  const baseUrl = flagString(p, 'base-url');
  const app = evalApp(p, settings, {
    engine: engineName as (typeof engineKinds)[number],
    model,
    ...(baseUrl ? { openaiBaseUrl: baseUrl } : {}),
  });
  try {
    return await runWith(app, p, { config, runName, seed, parallelFlag, selectedProblems: loaded.problems });
  } finally {
    await app.close();
  }
}

interface RunPlan {
  config: EvalConfig;
  runName: string;
  seed?: number;
  parallelFlag?: number;
  selectedProblems: ReturnType<typeof loadBenchmark>['problems'];
}

async function runWith(
  app: App,
  p: Parsed,
  { config, runName, seed, parallelFlag, selectedProblems }: RunPlan,
): Promise<number> {
  const { samples, fixTurns } = config;
  const loaded = { problems: selectedProblems };
  const store = app.evals();
  store.openRun(runName, config, loaded.problems);
  const outDir = resolve(flagString(p, 'out') ?? join('kimina-eval', runName));
  // This invocation works on the problems it selected; the run (and its report) may hold more.
  const selected = loaded.problems.map((pr) => pr.id);
  const finishedBefore = store.finishedSamples(runName);
  const samplesNow = store.getRun(runName)!.config.samples;
  const doneBefore = selected.filter((id) => (finishedBefore.get(id)?.size ?? 0) >= samplesNow).length;
  console.error(
    `run '${runName}': ${selected.length} problems × ${samplesNow} samples${fixTurns ? ' (+ fix turn)' : ''}, ${doneBefore} already complete`,
  );

  let outcome = { finished: 0, complete: doneBefore === selected.length, stopped: false };
  if (!outcome.complete) {
    const built = app.verifier();
    const engine = await app.engine();
    const verifierCapacity = app.verifierSettings().maxRepls + app.verifierSettings().maxQueue;
    const backends = {
      engine,
      verifier: built.verifier,
      verifierCapacity,
      describe: [`engine: ${engine.name} (${engine.model})`, `Lean: ${built.describe}`],
    };
    const ctl = new AbortController();
    const onSignal = () => {
      if (ctl.signal.aborted) process.exit(130);
      console.error(
        '\nstopping: unfinished problems are dropped and redone by the next run (Ctrl-C again to quit now)',
      );
      ctl.abort();
    };
    try {
      for (const line of backends.describe) console.error(line);
      const parallel = parallelFlag ?? Math.max(1, Math.min(64, backends.verifierCapacity));
      if (parallel > backends.verifierCapacity)
        throw new Error(
          `--parallel ${parallel} exceeds what the verifier queues (${backends.verifierCapacity}); raise KIMINA_MAX_QUEUE or lower --parallel`,
        );
      const attempt = proveAttempter({
        deps: {
          engine: backends.engine,
          verifier: backends.verifier,
          options: { verifyTimeout: config.leanTimeout, infotree: config.goals ? 'original' : null },
        },
        temperature: config.temperature,
        topP: config.topP,
        maxTokens: config.maxTokens,
        parallel,
        seed,
      });
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const bar = new ProgressBar('eval', selected.length - doneBefore);
      outcome = await runEvaluation({
        store,
        run: runName,
        attempt,
        signal: ctl.signal,
        keepResponses: p.flags.has('keep-responses'),
        only: selected,
        // Problems are a few at a time; samples are bounded by the attempter's gate.
        concurrency: Math.max(1, Math.ceil(parallel / samples) + 1),
        onProgress: (pr) =>
          bar.update(pr.done - doneBefore, `solved ${pr.solved}/${pr.done} (${pr.done}/${pr.total} problems)`),
      });
      bar.done(`finished ${outcome.finished} problems`);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
  const report = buildReport(store, runName);
  if (p.flags.has('no-report')) {
    for (const l of headline(report)) console.log(l);
    return outcome.stopped ? 130 : 0;
  }
  const files = writeReport(report, outDir);
  for (const l of headline(report)) console.log(l);
  console.log(`report: ${files.join(', ')}`);
  if (outcome.stopped) {
    console.error(`stopped; rerun the same command to continue run '${runName}'`);
    return 130;
  }
  return 0;
}

function loadReport(ref: string, store: () => EvalStore): EvalReport {
  if (ref.endsWith('.json') && existsSync(ref)) {
    const parsed = JSON.parse(readFileSync(ref, 'utf8')) as EvalReport;
    if (!parsed?.run?.name || !Array.isArray(parsed.problems))
      throw new Error(`${ref} is not a kimina eval report.json`);
    return parsed;
  }
  return buildReport(store(), ref);
}

async function fetchCommand(p: Parsed, settings: Settings): Promise<number> {
  const what = p.positionals[1];
  if (what === undefined || what === MINIF2F_TEST_REPO || what === 'minif2f_test') {
    const r = await fetchMinif2fTest({
      dest: resolve(flagString(p, 'dest') ?? defaultMinif2fTestPath(settings.home)),
      endpoint: settings.datasetsServer,
      force: p.flags.has('force'),
      token: settings.hfToken,
      log: (l) => console.error(l),
    });
    console.log(`${MINIF2F_TEST_REPO}: ${r.rows} problems, ${r.withInformal} with an informal statement, in ${r.path}`);
    console.log(
      `Published figures were checked on kimina-lean-server 2.0.0's Lean (v4.15.0); check with that Lean for a comparable figure.`,
    );
    console.log(`evaluate with: kimina eval run ${r.path} --model NAME --verdict ${publishedModes()}`);
    return 0;
  }
  if (what !== 'minif2f')
    throw new Error(`kimina eval fetch knows ${MINIF2F_TEST_REPO} (the default) and 'minif2f', got '${what}'`);
  const method = flagString(p, 'method') ?? 'auto';
  if (!['git', 'archive', 'auto'].includes(method))
    throw new Error(`--method must be git, archive or auto, got '${method}'`);
  const dest = resolve(flagString(p, 'dest') ?? join(settings.home, 'benchmarks', 'miniF2F-lean4'));
  const check = await fetchMiniF2F({
    dest,
    method: method as 'git' | 'archive' | 'auto',
    url: flagString(p, 'url'),
    ref: flagString(p, 'ref'),
    force: p.flags.has('force'),
    log: (l) => console.error(l),
    env: settings.childEnv,
  });
  for (const l of describeCheck(check)) console.log(l);
  console.log(`evaluate with: kimina eval run ${join(dest, 'MiniF2F')} --split test --model NAME`);
  return check.problems.length === 0 ? 0 : 1;
}

export async function run(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['keep-responses', 'no-report', 'force', 'help', 'json', 'goals']);
  const sub = p.positionals[0];
  if (!sub || p.flags.has('help') || sub === 'help') {
    console.log(USAGE);
    return sub || p.flags.has('help') ? 0 : 2;
  }
  if (sub === 'run') return runCommand(p, settings);
  const app = evalApp(p, settings);
  try {
    return await storedRuns(p, sub, app);
  } finally {
    await app.close();
  }
}

/** The subcommands over stored runs (and fetch), with the store opened only when one is needed. */
async function storedRuns(p: Parsed, sub: string, app: App): Promise<number> {
  const lazyStore = (() => {
    let s: EvalStore | null = null;
    return () => (s ??= app.evals());
  })();
  switch (sub) {
    case 'report': {
      const name = p.positionals[1];
      if (!name) throw new Error('kimina eval report needs a run name');
      const report = buildReport(lazyStore(), name);
      const files = writeReport(report, resolve(flagString(p, 'out') ?? join('kimina-eval', name)));
      for (const l of headline(report)) console.log(l);
      console.log(`report: ${files.join(', ')}`);
      return 0;
    }
    case 'compare': {
      const [, a, b] = p.positionals;
      if (!a || !b) throw new Error('kimina eval compare needs two runs (names or report.json files)');
      const cmp = compareReports(loadReport(a, lazyStore), loadReport(b, lazyStore));
      const files = writeComparison(
        cmp,
        resolve(flagString(p, 'out') ?? join('kimina-eval', `compare-${cmp.a.name}-vs-${cmp.b.name}`)),
      );
      const last = cmp.passAtK[cmp.passAtK.length - 1];
      console.log(
        `${cmp.common} common problems; pass@${cmp.k}: A ${pct(last.a)}, B ${pct(last.b)}; only A solves ${cmp.onlyA.length}, only B solves ${cmp.onlyB.length}`,
      );
      for (const d of cmp.changed.slice(0, 20))
        console.log(`  ${d.id}: ${d.a.correct}/${d.a.samples} → ${d.b.correct}/${d.b.samples}`);
      if (cmp.changed.length > 20) console.log(`  … ${cmp.changed.length - 20} more in compare.md`);
      console.log(`report: ${files.join(', ')}`);
      return 0;
    }
    case 'list': {
      const store = lazyStore();
      const runs = store.listRuns();
      if (runs.length === 0) console.log('no evaluation runs yet');
      for (const r of runs) {
        const s = store.summary(r.name);
        console.log(
          `${r.name}  ${r.config.model}  ${s.complete}/${s.problems} problems × ${r.config.samples}  ${r.createdAt}`,
        );
      }
      return 0;
    }
    case 'delete': {
      const name = p.positionals[1];
      if (!name) throw new Error('kimina eval delete needs a run name');
      if (!lazyStore().deleteRun(name)) throw new Error(`no evaluation run named '${name}'`);
      console.log(`deleted run '${name}'`);
      return 0;
    }
    case 'fetch':
      return fetchCommand(p, app.settings);
    default:
      // `kimina eval BENCHMARK …` is short for `kimina eval run BENCHMARK …`.
      if (existsSync(sub)) return runCommand({ ...p, positionals: ['run', ...p.positionals] }, app.settings);
      console.error(`kimina eval: unknown subcommand '${sub}'\n\n${USAGE}`);
      return 2;
  }
}
