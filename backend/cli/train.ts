// `kimina train …`: start and control fine-tuning runs on a running `kimina serve`, export verl jobs for a Ray
// cluster; `kimina trainer setup`: create the trainer's Python environment.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  routes,
  type RouteName,
  type RouteResponse,
  type StartTrainingRequest,
  type TrainingHyperparameters,
  type TrainingPresetName,
  type TrainingPrompt,
  type TrainingRun,
} from '../protocol';
import { ApiClient, ApiError, BackendUnreachable, type CallArgs } from '../client/apiClient';
import type { Settings } from '../settings/settings';
import { findServer } from '../editor/discovery';
import { buildPrompt } from '../prover/prompt';
import { harvestWorkspace } from '../training/harvest';
import { trainerPython, trainerSourceDir } from '../training/paths';
import { PRESETS, presetHyper } from '../training/presets';
import { splitHeldOut } from '../training/promptSet';
import { ensurePythonEnv } from '../training/pythonEnv';
import { exportVerl, RECIPE_START_MODEL, submitCommand } from '../training/verlExport';
import { NEWEST_VERL } from '../training/verlVersions';
import { MINIF2F_TEST_REPO, defaultMinif2fTestPath, minif2fTestPrompts } from '../eval/recipeBenchmark';
import { flagNumber, flagString, parseArgs, type Parsed } from './args';

const help = `usage: kimina train <command> [options]

  start --model M [--preset P] [--workspace DIR] [--prompts FILE.jsonl] [--held-out FILE.jsonl]
        [--gpus 0,1|cpu] [--when-idle] [--win-rate K] [--name NAME] [--set key=value ...]
                         start a GRPO run on the running backend (kimina serve); --win-rate K samples K
                         answers per prompt with the current model first and drops prompts won over half the time
  status [RUN] [--json]  list runs, or one run with its latest metrics
  pause RUN | resume RUN | cancel RUN
  logs RUN               the run's log
  export-onnx RUN [--no-quantize]   convert the finished run's weights for the in-process engine
  export-verl --out DIR --reward-url URL [--model M] [--workspace DIR] [--prompts FILE.jsonl]
        [--val minif2f|held-out|FILE.jsonl] [--dedupe] [--preset recipe-8gpu] [--set key=value ...]
        [--nodes N] [--gpus-per-node 8] [--verl 0.9.1] [--submit --address http://HEAD:8265]
                         write a verl job (parquet data, reward module, multi-turn dataset class, recipe
                         overrides) for a Ray cluster, for one verl release: --verl, else the one in the
                         trainer environment, else ${NEWEST_VERL} (known: 0.5.x to 0.9.x). Starts from ${RECIPE_START_MODEL} unless --model;
                         validates on miniF2F test (${MINIF2F_TEST_REPO}, from \`kimina eval fetch\`) unless
                         --val; keeps repeated prompts (the recipe repeats hard ones on purpose) unless --dedupe
  cluster status|logs|stop JOB --address http://HEAD:8265   follow a submitted verl job (ray job …)

Presets: ${Object.entries(PRESETS)
  .map(([k, v]) => `\n  ${k.padEnd(16)} ${v.summary}`)
  .join('')}
Prompt files: JSON Lines with formalStatement (or formal_statement) and optional id, informal.
The backend is found through KIMINA_SERVER_URL (and KIMINA_API_TOKEN) or the file kimina serve writes.`;

/** `kimina trainer gpu-check [DIR]`: the folder a GPU machine runs (backend/training/gpuCheck.ts). */
async function gpuCheck(p: Parsed, settings: Settings): Promise<number> {
  const { prepareGpuCheck } = await import('../training/gpuCheck');
  const dir = resolve(p.positionals[1] ?? 'gpu-check');
  const folder = prepareGpuCheck(dir, {
    python: flagString(p, 'python') ?? 'python3',
    wheels: !p.flags.has('no-wheels'),
    steps: flagNumber(p, 'steps'),
    env: settings.childEnv,
  });
  console.log(
    `gpu check ready in ${folder.dir}: configs.json, run.sh, ${folder.wheels.length} wheels (${(folder.wheelBytes / 2 ** 20).toFixed(1)} MiB of 64)`,
  );
  for (const w of folder.wheels) console.log(`  ${w}`);
  console.log('on the GPU machine, from the repository root: sh gpu-check/run.sh');
  return 0;
}

const setupHelp = (venv: string): string => `usage: kimina trainer setup [--gpu] [--venv DIR] [--python PYTHON]
       kimina trainer gpu-check [DIR] [--steps N] [--no-wheels] [--python PYTHON]
         writes DIR (default gpu-check/): the GRPO check for a GPU machine with no network (configs from the
         presets, the wheels its Python 3.12 image lacks, run.sh)

Creates the trainer's Python environment (default ${venv}) with pinned requirements:
backend/trainer/requirements-cpu.txt, or requirements-gpu.txt (adds vLLM) with --gpu. Needs Python 3.10+
with venv, and several GB of disk for torch.`;

type Call = <N extends RouteName>(name: N, ...input: CallArgs<N>) => Promise<RouteResponse<N>>;

/** Calls a route on the running backend (found from the settings); errors name the route and say what to check. */
const callerOf =
  (settings: Settings): Call =>
  async (name, ...input) => {
    const s = findServer(settings) ?? { url: 'http://127.0.0.1:8000', token: settings.apiToken };
    try {
      return await new ApiClient({ url: s.url, token: s.token }).call(name, ...input);
    } catch (err) {
      if (err instanceof BackendUnreachable) throw new Error(`${err.message} (is \`kimina serve\` running?)`);
      if (err instanceof ApiError)
        throw new Error(`${routes[name].method} ${routes[name].path}: ${err.status} ${err.message}`);
      throw err;
    }
  };

/** Prompts from a JSON Lines file: each line a TrainingPrompt, or {formalStatement, informal?, id?}. */
export function readPromptFile(path: string): TrainingPrompt[] {
  if (!existsSync(path)) throw new Error(`prompt file not found: ${path}`);
  const out: TrainingPrompt[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let row: Record<string, unknown>;
      try {
        row = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${path}:${i + 1}: not JSON`);
      }
      const statement = row.formalStatement ?? row.formal_statement;
      if (typeof statement !== 'string' || !statement.trim())
        throw new Error(`${path}:${i + 1}: formalStatement is missing`);
      const informal = typeof row.informal === 'string' ? row.informal : '';
      const prompt = Array.isArray(row.prompt)
        ? (row.prompt as TrainingPrompt['prompt'])
        : buildPrompt(statement, informal);
      out.push({
        id: typeof row.id === 'string' ? row.id : `${path}:${i + 1}`,
        prompt,
        formalStatement: statement,
        source: `${path}:${i + 1}`,
      });
    });
  return out;
}

/** `--set key=value` overrides of the preset's hyperparameters (numbers, or auto/on/off for useVllm). */
export function parseOverrides(values: string[]): Partial<TrainingHyperparameters> {
  const known = Object.keys(PRESETS['tiny-cpu'].hyper);
  const out: Record<string, unknown> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new Error(`--set needs key=value, got '${v}'`);
    const key = v.slice(0, eq);
    const raw = v.slice(eq + 1);
    if (!known.includes(key)) throw new Error(`unknown setting '${key}' (one of ${known.join(', ')})`);
    if (key === 'useVllm') out[key] = raw;
    else {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`${key} must be a number, got '${raw}'`);
      out[key] = n;
    }
  }
  return out as Partial<TrainingHyperparameters>;
}

function setValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--set' && args[i + 1] !== undefined) out.push(args[++i]);
    else if (args[i].startsWith('--set=')) out.push(args[i].slice(6));
  }
  return out;
}

function describe(run: TrainingRun): string {
  const evalKey = run.latestEval && Object.keys(run.latestEval.metrics).find((k) => k.includes('/pass@'));
  const evalText = run.latestEval && evalKey ? `  eval ${evalKey} ${run.latestEval.metrics[evalKey].toFixed(3)}` : '';
  return `${run.id}  ${run.state.padEnd(9)} step ${run.step}/${run.hyper.maxSteps} (checkpoint ${run.checkpointStep})  ${run.preset}  ${run.name}${evalText}${run.error ? `\n  error: ${run.error.split('\n')[0]}` : ''}`;
}

async function start(p: Parsed, args: string[], call: Call): Promise<number> {
  const model = flagString(p, 'model');
  if (!model) throw new Error('--model is required (a Hugging Face id or a folder with safetensors weights)');
  const prompts = flagString(p, 'prompts');
  const heldOut = flagString(p, 'held-out');
  const workspace = flagString(p, 'workspace');
  if (!prompts && !workspace)
    throw new Error('give --workspace DIR (harvest your Lean files) and/or --prompts FILE.jsonl');
  const req: StartTrainingRequest = {
    preset: (flagString(p, 'preset') ?? 'single-gpu-lora') as TrainingPresetName,
    model: existsSync(model) ? resolve(model) : model,
    workspace: workspace && resolve(workspace),
    prompts: prompts ? readPromptFile(prompts) : undefined,
    heldOut: heldOut ? readPromptFile(heldOut) : undefined,
    gpus: flagString(p, 'gpus'),
    schedule: p.flags.has('when-idle') ? 'when-idle' : 'now',
    name: flagString(p, 'name'),
    overrides: parseOverrides(setValues(args)),
  };
  const winRate = flagNumber(p, 'win-rate');
  if (winRate !== undefined) req.winRate = { samples: winRate };
  const run = await call('trainingStart', { body: req });
  if (p.flags.has('json')) console.log(JSON.stringify(run, null, 2));
  else
    console.log(
      `${describe(run)}\n${run.trainPrompts} training prompts, ${run.heldOutPrompts} held out; follow with \`kimina train status ${run.id}\``,
    );
  return 0;
}

async function status(p: Parsed, call: Call): Promise<number> {
  const id = p.positionals[1];
  if (!id) {
    const { runs } = await call('trainingRuns');
    if (p.flags.has('json')) console.log(JSON.stringify(runs, null, 2));
    else console.log(runs.length ? runs.map(describe).join('\n') : 'no training runs');
    return 0;
  }
  const run = await call('trainingRun', { params: { id } });
  const { steps } = await call('trainingMetrics', {
    params: { id },
    query: { kind: 'train', since: Math.max(0, run.step - 1) },
  });
  if (p.flags.has('json')) {
    console.log(JSON.stringify({ run, latest: steps[steps.length - 1] ?? null }, null, 2));
    return 0;
  }
  console.log(describe(run));
  const last = steps[steps.length - 1];
  if (last) {
    const keys = [
      'reward',
      'acc/turn_1',
      'acc/turn_2',
      'format_error_rate/turn_1',
      'completions/mean_length',
      'completions/clipped_ratio',
      'policy_loss',
      'grad_norm',
      'entropy',
      'perf/tokens_per_s',
      'perf/time_per_step',
      'perf/max_memory_allocated_gb',
      // fix prompts cached, and dropped because the preset's prompt budget is too small for them
      'multiturn/turn_1/added_in_database',
      'multiturn/turn_1/max_prompt_token_len_exceeded',
      'multiturn/turn_1/feedback_too_long',
    ];
    for (const k of keys) if (k in last.metrics) console.log(`  ${k.padEnd(30)} ${last.metrics[k].toPrecision(4)}`);
  }
  if (run.improved !== null)
    console.log(`  held-out: ${run.improved ? 'better than' : 'not better than'} the base model`);
  if (run.finalDir) console.log(`  final weights: ${run.finalDir}`);
  return 0;
}

async function control(action: 'pause' | 'resume' | 'cancel', p: Parsed, call: Call): Promise<number> {
  const id = p.positionals[1];
  if (!id) throw new Error(`usage: kimina train ${action} RUN`);
  const route = ({ pause: 'trainingPause', resume: 'trainingResume', cancel: 'trainingCancel' } as const)[action];
  console.log(describe(await call(route, { params: { id } })));
  return 0;
}

/** Drops exact repeats only: the same statement and the same prompt messages (`--dedupe`). */
export function dropExactRepeats(prompts: TrainingPrompt[]): TrainingPrompt[] {
  const seen = new Set<string>();
  return prompts.filter((p) => {
    const key = JSON.stringify([p.formalStatement, p.prompt]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The validation prompts of an export: miniF2F test (default), a held-out share, or a prompt file. */
function validationSet(
  home: string,
  choice: string,
  prompts: TrainingPrompt[],
  hyper: TrainingHyperparameters,
): { train: TrainingPrompt[]; test: TrainingPrompt[]; source: string } {
  if (choice === 'held-out') {
    const split = splitHeldOut(prompts, hyper.heldOutShare, hyper.seed);
    return { train: split.train, test: split.heldOut, source: 'kimina/held-out' };
  }
  if (choice === 'minif2f')
    return {
      train: prompts,
      test: minif2fTestPrompts(defaultMinif2fTestPath(home)),
      source: MINIF2F_TEST_REPO,
    };
  return { train: prompts, test: readPromptFile(choice), source: choice };
}

async function exportVerlCommand(p: Parsed, args: string[], settings: Settings): Promise<number> {
  const out = flagString(p, 'out');
  const rewardUrl = flagString(p, 'reward-url');
  if (!out || !rewardUrl)
    throw new Error('export-verl needs --out DIR and --reward-url URL (this backend as the cluster reaches it)');
  let prompts: TrainingPrompt[] = [];
  const file = flagString(p, 'prompts');
  const workspace = flagString(p, 'workspace');
  if (file) prompts.push(...readPromptFile(file));
  if (workspace) prompts.push(...(await harvestWorkspace(resolve(workspace))).prompts);
  const before = prompts.length;
  if (p.flags.has('dedupe')) prompts = dropExactRepeats(prompts);
  if (prompts.length === 0) throw new Error('no prompts: give --prompts FILE.jsonl and/or --workspace DIR');
  const overrides = parseOverrides(setValues(args));
  const hyper = presetHyper((flagString(p, 'preset') ?? 'recipe-8gpu') as TrainingPresetName, overrides);
  const split = validationSet(settings.home, flagString(p, 'val') ?? 'minif2f', prompts, hyper);
  const result = await exportVerl({
    outDir: resolve(out),
    model: flagString(p, 'model') ?? RECIPE_START_MODEL,
    train: split.train,
    test: split.test,
    testSource: split.source,
    hyper,
    steps: overrides.maxSteps,
    rewardUrl,
    nodes: flagNumber(p, 'nodes'),
    gpusPerNode: flagNumber(p, 'gpus-per-node'),
    python: trainerPython(settings),
    sourceDir: trainerSourceDir(),
    env: settings.childEnv,
    verl: flagString(p, 'verl'),
  });
  const dropped = before - prompts.length;
  console.log(
    `verl job written to ${result.outDir}: ${result.files.join(', ')} (${split.train.length} train prompts${dropped ? `, ${dropped} exact repeats dropped` : ''}; ${split.test.length} validation prompts from ${split.source})`,
  );
  const wiring = result.verl.wiring === 'batch' ? 'the batch reward' : "verl's per-sample reward loop";
  const from = result.verl.from === 'default' ? 'the newest known; --verl for another' : `from the ${result.verl.from}`;
  console.log(
    `written for verl ${result.verl.version} (${from}), scoring through ${wiring}; run_verl.sh checks the cluster's verl`,
  );
  const address = flagString(p, 'address');
  const command = submitCommand(address ?? 'http://HEAD_NODE:8265');
  if (!p.flags.has('submit')) {
    console.log(`submit from that folder with:\n  ${command.join(' ')}`);
    return 0;
  }
  if (!address) throw new Error('--submit needs --address http://HEAD:8265 (the Ray dashboard)');
  return runRay(command, result.outDir);
}

function runRay(command: string[], cwd?: string): number {
  const r = spawnSync(command[0], command.slice(1), { stdio: 'inherit', cwd });
  if (r.error) throw new Error(`could not run ray (pip install "ray[default]"): ${r.error.message}`);
  return r.status ?? 1;
}

function cluster(p: Parsed): number {
  const [, action, job] = p.positionals;
  const address = flagString(p, 'address');
  if (!['status', 'logs', 'stop'].includes(action ?? '') || !job || !address)
    throw new Error('usage: kimina train cluster status|logs|stop JOB --address http://HEAD:8265');
  return runRay(['ray', 'job', action, `--address=${address}`, job]);
}

export async function run(args: string[], settings: Settings): Promise<number> {
  const call = callerOf(settings);
  const p = parseArgs(args, ['help', 'json', 'when-idle', 'submit', 'no-quantize', 'dedupe']);
  const command = p.positionals[0];
  if (!command || p.flags.has('help')) {
    console.log(help);
    return command ? 0 : 2;
  }
  switch (command) {
    case 'start':
      return start(p, args, call);
    case 'status':
      return status(p, call);
    case 'pause':
    case 'resume':
    case 'cancel':
      return control(command, p, call);
    case 'logs': {
      const id = p.positionals[1];
      if (!id) throw new Error('usage: kimina train logs RUN');
      const { lines } = await call('trainingLog', { params: { id }, query: { limit: 500 } });
      for (const l of lines) console.log(`${l.at}  ${l.message}`);
      return 0;
    }
    case 'export-onnx': {
      const id = p.positionals[1];
      if (!id) throw new Error('usage: kimina train export-onnx RUN');
      const r = await call('trainingExport', {
        params: { id },
        body: { quantize: p.flags.has('no-quantize') ? 'none' : 'q4' },
      });
      console.log(`ONNX model: ${r.onnxDir}`);
      return 0;
    }
    case 'export-verl':
      return exportVerlCommand(p, args, settings);
    case 'cluster':
      return cluster(p);
    default:
      console.error(`kimina train: unknown command '${command}'\n\n${help}`);
      return 2;
  }
}

/** `kimina trainer setup`. */
export async function runTrainer(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['help', 'gpu', 'no-wheels']);
  if (p.positionals[0] === 'gpu-check' && !p.flags.has('help')) return gpuCheck(p, settings);
  if (p.positionals[0] !== 'setup' || p.flags.has('help')) {
    console.log(setupHelp(settings.trainerVenv));
    return p.flags.has('help') ? 0 : 2;
  }
  const dir = resolve(flagString(p, 'venv') ?? settings.trainerVenv);
  const requirements = join(trainerSourceDir(), p.flags.has('gpu') ? 'requirements-gpu.txt' : 'requirements-cpu.txt');
  console.error(`trainer environment: ${dir}\nrequirements: ${requirements}`);
  const result = await ensurePythonEnv({
    dir,
    requirements,
    basePython: flagString(p, 'python'),
    env: settings.childEnv,
    onProgress: (line) => {
      if (/^(creating|installing|Collecting|Downloading|Installing|Successfully|ERROR|pip failed)/.test(line.trim()))
        console.error(`  ${line.trim()}`);
    },
  });
  console.log(
    `${result.created ? 'created' : 'already up to date'} (${result.seconds.toFixed(0)} s): ${result.python}`,
  );
  for (const [m, v] of Object.entries(result.versions)) console.log(`  ${m} ${v}`);
  if (dir !== resolve(settings.trainerVenv)) console.log(`use it with KIMINA_TRAINER_PYTHON=${result.python}`);
  return 0;
}
