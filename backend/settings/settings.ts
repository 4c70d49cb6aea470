// The backend's settings: every environment variable it reads, declared once with its type, default and
// one line of doc, and the only module that reads `process.env` (it also copies it once as `childEnv`, the base
// environment of every child process). The composition root (app.ts) and the entry points (cli.ts, cli/*) read them once and
// hand each part its typed slice; the domain rooms never call the readers (test/architecture.test.ts). docs/settings.md is generated from this
// table (scripts/settings-doc.ts) and test/settings/settings.test.ts keeps the two equal.
// One floor up from the ground: imports only the protocol's table of VS Code settings (the engine kinds), so every
// room but protocol may import it.
import { availableParallelism, homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { engineKinds } from '../protocol/settingsTable';

/** An environment: process.env, or a plain object in tests. */
export type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_OPENAI_BASE_URL = 'http://127.0.0.1:8000/v1';

/** The engine kinds KIMINA_ENGINE accepts (held by the one table of VS Code settings, beside kimina.engine). */
export { engineKinds };

function given(raw: string | undefined): string | undefined {
  return raw === undefined || raw === '' ? undefined : raw;
}
function number(name: string, raw: string | undefined, fallback: number): number {
  if (given(raw) === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}
function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (given(raw) === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw!))
    throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return raw as T;
}
function flag(raw: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((raw ?? '').toLowerCase());
}

/** Who reads a variable: the backend (typed in Settings), the Python trainer, the stand-in REPL, the benchmarks or the tests. */
type Scope = 'backend' | 'trainer' | 'stand-in REPL' | 'bench' | 'test';

interface Declaration<T> {
  /** The environment variable (the first one set wins when `also` names others). */
  name: string;
  also?: string[];
  /** For people: the accepted values. */
  type: string;
  /** For people: what applies when the variable is unset or empty. */
  default: string;
  doc: string;
  /** Parses the raw value (undefined when unset); `env` is for defaults derived from other variables. */
  read(raw: string | undefined, env: Env): T;
}

const declarations = {
  // where things live
  home: {
    name: 'KIMINA_HOME',
    type: 'path',
    default: '`~/.kimina`',
    doc: 'where the backend keeps its database, models, trainer environment, runs and `serve.json`',
    read: (raw: string | undefined) => given(raw) ?? join(homedir(), '.kimina'),
  },
  db: {
    name: 'KIMINA_DB',
    type: 'path or `:memory:`',
    default: '`<KIMINA_HOME>/kimina.db`',
    doc: 'the SQLite store (attempts, training runs, evaluation results); `:memory:` keeps nothing',
    read: (raw: string | undefined, env: Env): string =>
      raw === ':memory:' ? raw : resolve(given(raw) ?? join(setting('home', env), 'kimina.db')),
  },
  debug: {
    name: 'KIMINA_DEBUG',
    type: 'flag',
    default: 'off',
    doc: 'print the stack trace of errors',
    read: (raw: string | undefined) => given(raw) !== undefined,
  },
  noColor: {
    name: 'NO_COLOR',
    type: 'flag',
    default: 'unset',
    doc: 'no colours in `kimina prove` output (no-color.org)',
    read: (raw: string | undefined) => given(raw) !== undefined,
  },
  searchPath: {
    name: 'PATH',
    type: 'folders',
    default: 'inherited',
    doc: 'where `lake` is looked for (besides `~/.elan/bin`)',
    read: (raw: string | undefined) => (given(raw) ?? '').split(delimiter).filter(Boolean),
  },
  userHome: {
    name: 'HOME',
    type: 'path',
    default: 'inherited',
    doc: "with ELAN_HOME unset, Lean's toolchains are found under `$HOME/.elan`",
    read: (raw: string | undefined) => given(raw),
  },
  elanHome: {
    name: 'ELAN_HOME',
    type: 'path',
    default: 'unset',
    doc: "elan's folder, when not `~/.elan`",
    read: (raw: string | undefined) => given(raw),
  },
  pythonPath: {
    name: 'PYTHONPATH',
    type: 'folders',
    default: 'inherited',
    doc: 'kept for the trainer, after its own sources',
    read: (raw: string | undefined) => given(raw),
  },
  // the HTTP server and attaching to it
  host: {
    name: 'KIMINA_HOST',
    type: 'host',
    default: '`127.0.0.1`',
    doc: 'where `kimina serve` listens; a non-loopback host needs an API token',
    read: (raw: string | undefined) => given(raw) ?? '127.0.0.1',
  },
  port: {
    name: 'KIMINA_PORT',
    type: 'number',
    default: '`8000`',
    doc: "the port of `kimina serve` (kimina-client's default)",
    read: (raw: string | undefined) => number('KIMINA_PORT', raw, 8000),
  },
  apiToken: {
    name: 'KIMINA_API_TOKEN',
    also: ['LEAN_SERVER_API_KEY'],
    type: 'string',
    default: 'unset',
    doc: 'bearer token the server requires on every route but health, and that clients send',
    read: (raw: string | undefined) => given(raw),
  },
  allowedHosts: {
    name: 'KIMINA_ALLOWED_HOSTS',
    type: 'list',
    default: 'none',
    doc: 'Host names `kimina serve` answers besides loopback ones, when it listens beyond loopback (comma-separated)',
    read: (raw: string | undefined) =>
      (given(raw) ?? '')
        .split(',')
        .map((h) => h.trim())
        .filter(Boolean),
  },
  serverUrl: {
    name: 'KIMINA_SERVER_URL',
    type: 'URL',
    default: 'unset',
    doc: 'a running `kimina serve` that the editor backend and `kimina train` attach to (else `serve.json`)',
    read: (raw: string | undefined) => given(raw)?.replace(/\/+$/, ''),
  },
  proveTimeoutS: {
    name: 'KIMINA_PROVE_TIMEOUT',
    type: 'seconds',
    default: '`0` (none)',
    doc: 'the editor backend stops a whole proof after this long',
    read: (raw: string | undefined) => number('KIMINA_PROVE_TIMEOUT', raw, 0),
  },
  agentJobsPerClient: {
    name: 'KIMINA_AGENT_JOBS',
    type: 'count',
    default: '`3`',
    doc: "proof jobs one agent (MCP client) may have queued or running at once (`prove`, `repair`); agent jobs run one at a time beside the editor's own proofs",
    read: (raw: string | undefined) => {
      const n = number('KIMINA_AGENT_JOBS', raw, 3);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`KIMINA_AGENT_JOBS must be a whole number of at least 1, got ${JSON.stringify(raw)}`);
      return n;
    },
  },
  agentJobKeepHours: {
    name: 'KIMINA_AGENT_JOB_KEEP_HOURS',
    type: 'hours',
    default: '`24`',
    doc: 'how long a finished agent job (its verdicts, verified body and edit) stays in the database for `job` and `apply`',
    read: (raw: string | undefined) => {
      const n = number('KIMINA_AGENT_JOB_KEEP_HOURS', raw, 24);
      if (n <= 0) throw new Error(`KIMINA_AGENT_JOB_KEEP_HOURS must be above 0, got ${JSON.stringify(raw)}`);
      return n;
    },
  },
  // the model
  engine: {
    name: 'KIMINA_ENGINE',
    type: engineKinds.map((k) => `\`${k}\``).join(' or '),
    default: '`auto`',
    doc: '`auto` chooses per machine between the in-process engines by their calibrated cost models (the earlier expected first verified proof; docs/models.md), or one named: in-process ONNX, an OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama), in-process llama.cpp (docs/llama-engine.md), or a vLLM server the backend starts itself (docs/vllm-engine.md)',
    read: (raw: string | undefined) => oneOf('KIMINA_ENGINE', raw, engineKinds, 'auto'),
  },
  model: {
    name: 'KIMINA_MODEL',
    type: 'hub id or folder',
    default: "`AI-MO/Kimina-Prover-RL-0.6B` (onnx); the server's only model (openai)",
    doc: 'the prover model',
    read: (raw: string | undefined) => given(raw),
  },
  openaiBaseUrl: {
    name: 'KIMINA_OPENAI_BASE_URL',
    type: 'URL',
    default: `\`${DEFAULT_OPENAI_BASE_URL}\``,
    doc: "the OpenAI-compatible server's API root",
    read: (raw: string | undefined) => given(raw) ?? DEFAULT_OPENAI_BASE_URL,
  },
  openaiApiKey: {
    name: 'KIMINA_OPENAI_API_KEY',
    type: 'string',
    default: 'unset',
    doc: 'sent to the model server as `Authorization: Bearer …`',
    read: (raw: string | undefined) => given(raw),
  },
  openaiN: {
    name: 'KIMINA_OPENAI_N',
    type: '`auto`, `native` or `parallel`',
    default: '`auto`',
    doc: 'send `n`, or one request per sample (`auto` finds out)',
    read: (raw: string | undefined) => oneOf('KIMINA_OPENAI_N', raw, ['auto', 'native', 'parallel'] as const, 'auto'),
  },
  device: {
    name: 'KIMINA_DEVICE',
    type: '`cpu`, `cuda` or `auto`',
    default: '`cpu`',
    doc: 'where the ONNX engine runs (`auto` is `cpu`; CUDA falls back to the CPU, saying why)',
    read: (raw: string | undefined) =>
      oneOf('KIMINA_DEVICE', raw === 'auto' ? '' : raw, ['cpu', 'cuda'] as const, 'cpu'),
  },
  kvCache: {
    name: 'KIMINA_KV_CACHE',
    type: '`auto`, `fp32`, `fp16` or `int8`',
    default: '`auto`',
    doc: "precision of the ONNX engine's KV cache: `fp16` halves its memory and slows long-context decoding (docs/onnx-engine.md); `int8` (the C API path only) quarters it, with the logit error measured in docs/onnx-engine.md; `auto` is `fp16` where a float32 cache of 8 samples × 8,192 tokens would take more than 40% of the memory",
    read: (raw: string | undefined) => oneOf('KIMINA_KV_CACHE', raw, ['auto', 'fp32', 'fp16', 'int8'] as const, 'auto'),
  },
  speculation: {
    name: 'KIMINA_SPECULATION',
    type: 'flag',
    default: 'off',
    doc: 'speculative decoding by prompt lookup in the ONNX engine (same greedy output, same sampling distribution): 1.40× on Kimina-shaped answers on a quiet 2-core machine, but it lost under load (docs/onnx-engine.md), so it is off unless asked',
    read: (raw: string | undefined) => flag(raw),
  },
  llamaGpu: {
    name: 'KIMINA_LLAMA_GPU',
    type: '`auto`, `metal`, `cuda`, `vulkan` or `cpu`',
    default: '`auto`',
    doc: "the llama engine's llama.cpp backend: `auto` takes Metal, else CUDA, else Vulkan, else the CPU, the first whose prebuilt build loads (docs/llama-engine.md)",
    read: (raw: string | undefined) =>
      oneOf('KIMINA_LLAMA_GPU', raw, ['auto', 'metal', 'cuda', 'vulkan', 'cpu'] as const, 'auto'),
  },
  llamaWeights: {
    name: 'KIMINA_LLAMA_WEIGHTS',
    type: '`q8_0`, `f16`, `q4_0` or `f32`',
    default: '`q8_0`',
    doc: "type of the llama engine's weight matrices in the GGUF it writes from the checkpoint (cached beside the model)",
    read: (raw: string | undefined) =>
      oneOf('KIMINA_LLAMA_WEIGHTS', raw, ['q8_0', 'f16', 'q4_0', 'f32'] as const, 'q8_0'),
  },
  vllmIdleMinutes: {
    name: 'KIMINA_VLLM_IDLE_MINUTES',
    type: 'minutes ≥ 0',
    default: '`10`',
    doc: 'kimina.engine = vllm: the vLLM server the backend started stops after this long without a request, giving the GPU back (the next request starts it again); 0 keeps it up until the backend stops (docs/vllm-engine.md)',
    read: (raw: string | undefined) => {
      const n = number('KIMINA_VLLM_IDLE_MINUTES', raw, 10);
      if (n < 0) throw new Error(`KIMINA_VLLM_IDLE_MINUTES must be 0 or more, got '${raw}'`);
      return n;
    },
  },
  vllmGpuMemoryUtilization: {
    name: 'KIMINA_VLLM_GPU_MEMORY_UTILIZATION',
    type: 'number in (0, 1]',
    default: '`0.85`',
    doc: "kimina.engine = vllm: the share of the GPU's memory vLLM takes for the model and its KV cache (its --gpu-memory-utilization)",
    read: (raw: string | undefined) => {
      const n = number('KIMINA_VLLM_GPU_MEMORY_UTILIZATION', raw, 0.85);
      if (!(n > 0 && n <= 1))
        throw new Error(`KIMINA_VLLM_GPU_MEMORY_UTILIZATION must be above 0 and at most 1, got '${raw}'`);
      return n;
    },
  },
  spinning: {
    name: 'KIMINA_SPINNING',
    type: 'flag',
    default: 'off',
    doc: "let the ONNX engine's threads spin between operators: about 1.3× at short context on an idle machine, several times slower when other processes (Lean) compete for the cores",
    read: (raw: string | undefined) => flag(raw),
  },
  threads: {
    name: 'KIMINA_THREADS',
    type: 'whole number ≥ 1',
    default: 'every core',
    doc: 'CPU threads of the ONNX engine',
    read: (raw: string | undefined) => {
      if (given(raw) === undefined) return undefined;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`KIMINA_THREADS must be a positive whole number, got '${raw}'`);
      return n;
    },
  },
  rowsAtOnce: {
    name: 'KIMINA_ROWS_AT_ONCE',
    type: 'whole number ≥ 0',
    default: '0',
    doc: "samples the in-process engine decodes at once (the prover's waves), lowered to the rows whose caches at 24,576-token answers fit half the memory; 0 takes the row count from the device's calibration (the expected time to the first verified proof, docs/onnx-engine.md)",
    read: (raw: string | undefined) => {
      const n = number('KIMINA_ROWS_AT_ONCE', raw, 0);
      if (!Number.isInteger(n) || n < 0)
        throw new Error(`KIMINA_ROWS_AT_ONCE must be a whole number, 0 or more, got '${raw}'`);
      return n;
    },
  },
  hfEndpoint: {
    name: 'HF_ENDPOINT',
    type: 'URL',
    default: '`https://huggingface.co`',
    doc: 'the Hugging Face hub `kimina model pull` downloads from',
    read: (raw: string | undefined) => (given(raw) ?? 'https://huggingface.co').replace(/\/+$/, ''),
  },
  hfToken: {
    name: 'HF_TOKEN',
    also: ['HUGGING_FACE_HUB_TOKEN'],
    type: 'string',
    default: 'the token file',
    doc: 'hub token for gated or private models',
    read: (raw: string | undefined) => given(raw),
  },
  hfTokenPath: {
    name: 'HF_TOKEN_PATH',
    type: 'path',
    default: '`<HF_HOME>/token`',
    doc: 'the file holding the hub token (`hf auth login` writes it; `huggingface-cli login` under its older name)',
    read: (raw: string | undefined, env: Env): string => given(raw) ?? join(setting('hfHome', env), 'token'),
  },
  hfHome: {
    name: 'HF_HOME',
    type: 'path',
    default: '`~/.cache/huggingface`',
    doc: 'the Hugging Face folder (its token file, and its `hub` cache unless HF_HUB_CACHE is set)',
    // huggingface_hub 2.4.0 constants.py: HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
    read: (raw: string | undefined, env: Env): string =>
      given(raw) ?? join(setting('xdgCacheHome', env), 'huggingface'),
  },
  xdgCacheHome: {
    name: 'XDG_CACHE_HOME',
    type: 'path',
    default: '`~/.cache`',
    doc: 'where HF_HOME lies by default (as huggingface_hub reads it)',
    read: (raw: string | undefined): string => given(raw) ?? join(homedir(), '.cache'),
  },
  hfHubCache: {
    name: 'HF_HUB_CACHE',
    type: 'path',
    default: '`<HF_HOME>/hub` (or the older HUGGINGFACE_HUB_CACHE)',
    doc: 'the Hugging Face cache (`models--ORG--NAME/{refs,snapshots,blobs}`): a model found there is used without a download',
    read: (raw: string | undefined, env: Env): string =>
      given(raw) ?? setting('hfHubCacheLegacy', env) ?? join(setting('hfHome', env), 'hub'),
  },
  hfHubCacheLegacy: {
    name: 'HUGGINGFACE_HUB_CACHE',
    type: 'path',
    default: 'unset',
    doc: "huggingface_hub's older name for HF_HUB_CACHE",
    read: (raw: string | undefined) => given(raw),
  },
  datasetsServer: {
    name: 'KIMINA_DATASETS_SERVER',
    type: 'URL',
    default: '`https://datasets-server.huggingface.co`',
    doc: 'the Hugging Face datasets server `kimina eval fetch` reads AI-MO/minif2f_test from',
    read: (raw: string | undefined) => (given(raw) ?? 'https://datasets-server.huggingface.co').replace(/\/+$/, ''),
  },
  hfHubOffline: {
    name: 'HF_HUB_OFFLINE',
    // huggingface_hub 2.4.0 constants.py: `HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE`, true for 1/ON/YES/TRUE.
    also: ['TRANSFORMERS_OFFLINE'],
    type: 'flag',
    default: 'off',
    doc: 'never reach the hub (pulls use the Hugging Face cache, else fail with a clear error)',
    read: (raw: string | undefined) => flag(raw),
  },
  // Lean
  leanProject: {
    name: 'KIMINA_LEAN_PROJECT',
    type: 'path',
    default: 'the current folder',
    doc: 'the Lean project every REPL runs in',
    read: (raw: string | undefined) => resolve(given(raw) ?? process.cwd()),
  },
  replCommand: {
    name: 'KIMINA_REPL_COMMAND',
    type: 'shell command',
    default: 'unset',
    doc: 'the command line that starts one REPL, run by `sh -c` (Linux, macOS) or `cmd.exe /d /s /c` (Windows); else `lake env <repl>` of the project',
    read: (raw: string | undefined) => given(raw),
  },
  replPath: {
    name: 'KIMINA_REPL_PATH',
    type: 'path',
    default: 'found in the project or `<KIMINA_HOME>/repl`',
    doc: 'the REPL binary',
    read: (raw: string | undefined) => given(raw),
  },
  replGitUrl: {
    name: 'KIMINA_REPL_GIT_URL',
    type: 'URL',
    default: '`https://github.com/leanprover-community/repl`',
    doc: 'where `kimina lean setup` clones the REPL from',
    read: (raw: string | undefined) => given(raw) ?? 'https://github.com/leanprover-community/repl',
  },
  replFlushFix: {
    name: 'KIMINA_REPL_FLUSH_FIX',
    type: 'text',
    default: "repl's `4fc1e6d1dda170e8f0a6b698dd5f7e17a9cf52b4`",
    doc: 'the commit of the flush fix in the repository `kimina lean setup` clones (a mirror with other commit ids)',
    read: (raw: string | undefined) => {
      const v = given(raw);
      if (v !== undefined && !/^[0-9a-f]{7,40}$/.test(v))
        throw new Error('KIMINA_REPL_FLUSH_FIX must be a commit id (hex)');
      return v;
    },
  },
  maxRepls: {
    name: 'KIMINA_MAX_REPLS',
    type: 'number',
    default: 'CPUs − 1',
    doc: 'REPL processes at most',
    read: (raw: string | undefined) => number('KIMINA_MAX_REPLS', raw, Math.max(1, availableParallelism() - 1)),
  },
  maxQueue: {
    name: 'KIMINA_MAX_QUEUE',
    type: 'number',
    default: '`256`',
    doc: 'snippets that may wait beyond the running ones; more gets 429',
    read: (raw: string | undefined) => number('KIMINA_MAX_QUEUE', raw, 256),
  },
  maxBatch: {
    name: 'KIMINA_MAX_BATCH',
    type: 'number',
    default: '`128`',
    doc: 'snippets (or reward answers) one request may carry under `kimina serve`; more gets 413',
    read: (raw: string | undefined) => number('KIMINA_MAX_BATCH', raw, 128),
  },
  maxPerClient: {
    name: 'KIMINA_MAX_PER_CLIENT',
    type: 'number',
    default: 'half the queue (at least one batch)',
    doc: 'checks one client may have admitted at once; more gets 429',
    read: (raw: string | undefined) => (given(raw) === undefined ? undefined : number('KIMINA_MAX_PER_CLIENT', raw, 0)),
  },
  replMaxUses: {
    name: 'KIMINA_REPL_MAX_USES',
    type: 'number',
    default: '`200`',
    doc: 'replace a REPL after this many checks',
    read: (raw: string | undefined) => number('KIMINA_REPL_MAX_USES', raw, 200),
  },
  replMaxRssMb: {
    name: 'KIMINA_REPL_MAX_RSS_MB',
    type: 'MB',
    default: '`12000`',
    doc: 'replace a REPL whose process tree holds more memory',
    read: (raw: string | undefined) => number('KIMINA_REPL_MAX_RSS_MB', raw, 12_000),
  },
  replMemoryMb: {
    name: 'KIMINA_REPL_MEMORY_MB',
    type: 'MB',
    default: '`16384`',
    doc: "address-space cap per REPL (`ulimit -v`, Linux when the hard limit allows) and the memory guard's limit on the REPL's processes while a check runs (every OS); 0 = none",
    read: (raw: string | undefined) => number('KIMINA_REPL_MEMORY_MB', raw, 16_384),
  },
  replAnswerMb: {
    name: 'KIMINA_REPL_ANSWER_MB',
    type: 'MB',
    default: '`64`',
    doc: "largest answer one REPL command may print (bytes of its JSON, in MiB); past it the check fails with an error saying so and the REPL is replaced, so no Lean output can take the server's memory",
    read: (raw: string | undefined) => number('KIMINA_REPL_ANSWER_MB', raw, 64),
  },
  replIdleS: {
    name: 'KIMINA_REPL_IDLE_S',
    type: 'seconds',
    default: '`1800`',
    doc: 'stop REPLs idle this long (0 = keep them)',
    read: (raw: string | undefined) => number('KIMINA_REPL_IDLE_S', raw, 1800),
  },
  initRepls: {
    name: 'KIMINA_INIT_REPLS',
    type: 'JSON',
    default: '`{}`',
    doc: 'REPLs to start at once per header, e.g. `{"import Mathlib": 4}`',
    read: (raw: string | undefined): Record<string, number> => {
      if (given(raw) === undefined) return {};
      try {
        return JSON.parse(raw!) as Record<string, number>;
      } catch {
        throw new Error('KIMINA_INIT_REPLS must be JSON like {"import Mathlib": 2}');
      }
    },
  },
  timeoutS: {
    name: 'KIMINA_TIMEOUT',
    type: 'seconds',
    default: '`60`',
    doc: 'Lean time per snippet when a request names none',
    read: (raw: string | undefined) => number('KIMINA_TIMEOUT', raw, 60),
  },
  allowedAxioms: {
    name: 'KIMINA_ALLOWED_AXIOMS',
    type: 'comma-separated names',
    default: '`propext,Classical.choice,Quot.sound` (backend/lean/verdict.ts)',
    doc: 'the axioms a valid proof may use',
    read: (raw: string | undefined) =>
      given(raw)
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
  },
  allowNativeDecide: {
    name: 'KIMINA_ALLOW_NATIVE_DECIDE',
    type: 'flag',
    default: 'off',
    doc: 'allow `native_decide`/`bv_decide` and their axioms',
    read: (raw: string | undefined) => ['1', 'true', 'yes'].includes((raw ?? '').toLowerCase()),
  },
  sandbox: {
    name: 'KIMINA_SANDBOX',
    type: '`auto`, `bwrap`, `unshare` or `none`',
    default: '`auto`',
    doc: 'how REPLs are kept from the network and the file system',
    read: (raw: string | undefined) => {
      const value = given(raw) ?? 'auto';
      if (!['auto', 'bwrap', 'unshare', 'none'].includes(value))
        throw new Error(`KIMINA_SANDBOX must be auto, bwrap, unshare or none, got '${value}'`);
      return value as 'auto' | 'bwrap' | 'unshare' | 'none';
    },
  },
  // training
  trainingDir: {
    name: 'KIMINA_TRAINING_DIR',
    type: 'path',
    default: '`<KIMINA_HOME>/training`',
    doc: 'run folders: config, prompts, checkpoints, weights, logs',
    read: (raw: string | undefined, env: Env): string => given(raw) ?? join(setting('home', env), 'training'),
  },
  trainerVenv: {
    name: 'KIMINA_TRAINER_VENV',
    type: 'path',
    default: '`<KIMINA_HOME>/trainer-venv`',
    doc: "the trainer's Python environment (`kimina trainer setup`)",
    read: (raw: string | undefined, env: Env): string => given(raw) ?? join(setting('home', env), 'trainer-venv'),
  },
  trainerPython: {
    name: 'KIMINA_TRAINER_PYTHON',
    type: 'path',
    default: "the trainer environment's python",
    doc: 'the interpreter that runs the trainer',
    read: (raw: string | undefined) => given(raw),
  },
  trainerBackendUrl: {
    name: 'KIMINA_TRAINER_BACKEND_URL',
    type: 'URL',
    default: "the server's own address",
    doc: "how the trainer reaches the backend's reward service",
    read: (raw: string | undefined) => given(raw),
  },
} satisfies Record<string, Declaration<unknown>>;

type Declarations = typeof declarations;
export type SettingKey = keyof Declarations;

/** Every declared setting, typed. */
type DeclaredSettings = { -readonly [K in SettingKey]: ReturnType<Declarations[K]['read']> };

/**
 * Every backend setting, typed; read once by the composition root (backend/app/app.ts) and the entry points
 * (backend/cli/*), plus `childEnv`: the base environment every child process (REPL, lake, git, pip, the trainer)
 * starts from, a copy of this process's environment taken when the settings are read. The parts that start
 * children receive it with their slice and add their own variables on top; none reads process.env itself.
 */
export type Settings = DeclaredSettings & { childEnv: NodeJS.ProcessEnv };

function rawValue(d: Declaration<unknown>, env: Env): string | undefined {
  for (const name of [d.name, ...(d.also ?? [])]) if (given(env[name]) !== undefined) return env[name];
  return env[d.name];
}

/** One setting, read now (library defaults: a caller that has Settings passes the value instead). */
export function setting<K extends SettingKey>(key: K, env: Env = process.env): Settings[K] {
  const d = declarations[key] as Declaration<Settings[K]>;
  return d.read(rawValue(d, env), env);
}

/** Whether the variable behind a setting is set (non-empty), for commands whose default differs from the backend's. */
export function isSet(key: SettingKey, env: Env = process.env): boolean {
  return given(rawValue(declarations[key], env)) !== undefined;
}

/** Where the backend keeps its database, models and environments (KIMINA_HOME, read now). */
export function kiminaHome(): string {
  return setting('home');
}

/**
 * The base environment of child processes (Settings.childEnv): a copy of this process's environment, taken now. An
 * entry point that reads single settings instead of readSettings calls it once and hands the copy down.
 */
function baseChildEnv(): NodeJS.ProcessEnv {
  return { ...process.env };
}

/**
 * Every setting, validated, with `overrides` (command-line flags) on top. `env` is what the settings are read
 * from; `childEnv` is always a copy of the process environment, taken now (a test that reads settings from a plain
 * object still starts its children with PATH and the rest), unless `overrides` names one.
 */
export function readSettings(env: Env = process.env, overrides: Partial<Settings> = {}): Settings {
  return { ...readSome(Object.keys(declarations) as SettingKey[], env), childEnv: baseChildEnv(), ...overrides };
}

/** The settings one room needs (e.g. the verifier's), read now. */
export function readSome<K extends SettingKey>(keys: readonly K[], env: Env = process.env): Pick<Settings, K> {
  const out: Partial<Pick<Settings, K>> = {};
  for (const key of keys) out[key] = setting(key, env);
  return out as Pick<Settings, K>;
}

/** Variables read outside the backend's Node process: by the Python trainer, the benchmarks and the tests. */
const otherVariables: { name: string; scope: Exclude<Scope, 'backend'>; type: string; default: string; doc: string }[] =
  [
    {
      name: 'KIMINA_BACKEND_PID',
      scope: 'trainer',
      type: 'pid',
      default: 'set by the backend that starts the trainer',
      doc: 'the trainer exits when this process (its backend) dies (parent-death signal)',
    },
    {
      name: 'KIMINA_LIFELINE',
      scope: 'trainer',
      type: '`stdin`',
      default: 'set by the backend that starts the trainer',
      doc: 'the trainer exits when its stdin closes (the backend holds the only write end)',
    },
    {
      name: 'KIMINA_REWARD_URL',
      scope: 'trainer',
      type: 'URLs',
      default: 'set by `kimina train export-verl`',
      doc: 'the backend root the verl reward module posts to, or several separated by commas (one `kimina serve` per node)',
    },
    {
      name: 'KIMINA_REWARD_CONCURRENCY',
      scope: 'trainer',
      type: 'number',
      default: '`2`',
      doc: 'verl reward module: batches in flight per server',
    },
    {
      name: 'KIMINA_REWARD_TIMEOUT_S',
      scope: 'trainer',
      type: 's',
      default: '`900`',
      doc: "verl reward module (kimina_reward.py): the upper limit of each batch's deadline, and each request's HTTP timeout. A batch's deadline is 4 × its answers × the slowest seconds per answer among the last 16 batches any server answered, at least 120 s, doubled each time the same batch was taken from an overdue server, and never above this value (which is the deadline itself until a first batch is answered); a server holding a batch past its deadline while another server answers is taken out and the batch goes to the others. A request with no answer within this value fails, and its server is taken out",
    },
    {
      name: 'KIMINA_REWARD_BATCH_ITEMS',
      scope: 'trainer',
      type: 'number',
      default: '`64`',
      doc: 'verl reward module: answers per request (also cut by the body limit)',
    },
    {
      name: 'KIMINA_VERL_ANY',
      scope: 'trainer',
      type: '`1`',
      default: 'unset',
      doc: "an exported verl job's run_verl.sh starts even when the cluster's verl is not the release the job was written for",
    },
    {
      name: 'KIMINA_VERDICT_MODE',
      scope: 'trainer',
      type: '`strict` or `recipe`',
      default: '`strict`',
      doc: "the verl reward module's verdict: ours, or kimina-client's rule as the published runs",
    },
    {
      name: 'KIMINA_BENCH_PARTS',
      scope: 'bench',
      type: 'comma-separated',
      default: '`decode,batch,prefill,spec`',
      doc: '`bench:decode`: which parts to run',
    },
    {
      name: 'KIMINA_BENCH_ACCURACY',
      scope: 'bench',
      type: 'number',
      default: '`4`',
      doc: '`bench:decode`: MatMulNBits accuracy level of our 4-bit graph',
    },
    {
      name: 'STAND_IN_IMPORT_MS',
      scope: 'stand-in REPL',
      type: 'ms',
      default: '`0`',
      doc: 'how long the stand-in REPL takes to "import" a header (tests of slow imports)',
    },
    {
      name: 'STAND_IN_CHECK_MS',
      scope: 'stand-in REPL',
      type: 'ms',
      default: '`0`',
      doc: 'how long the stand-in REPL takes per command on an existing environment (realistic benchmarks)',
    },
    {
      name: 'STAND_IN_LOG',
      scope: 'stand-in REPL',
      type: 'path',
      default: 'unset',
      doc: 'a file where the stand-in REPL logs its commands (tests count imports)',
    },
    {
      name: 'STAND_IN_LEAN',
      scope: 'stand-in REPL',
      type: 'Lean version',
      default: 'the newest texts',
      doc: "which Lean generation's message texts the stand-in REPL speaks",
    },
    {
      name: 'KIMINA_AB_ROUNDS',
      scope: 'bench',
      type: 'number',
      default: '`3`',
      doc: '`bench/abDecode.ts`: rounds of the interleaved A/B',
    },
    {
      name: 'KIMINA_AB_STEPS',
      scope: 'bench',
      type: 'number',
      default: '`10`',
      doc: '`bench/abDecode.ts`: decode steps per variant and point',
    },
    {
      name: 'KIMINA_AB_VARIANTS',
      scope: 'bench',
      type: 'list',
      default: 'every variant',
      doc: '`bench/abDecode.ts`: which graph variants to compare (comma list)',
    },
    {
      name: 'KIMINA_AB_POINTS',
      scope: 'bench',
      type: 'list',
      default: '`32,512,4096`',
      doc: '`bench/abDecode.ts`: cached-token counts to measure at',
    },
    {
      name: 'KIMINA_AB_ROWS',
      scope: 'bench',
      type: 'list',
      default: '`1,8`',
      doc: '`bench/abDecode.ts`: row counts to measure with',
    },
    {
      name: 'KIMINA_AB_PAIRS',
      scope: 'bench',
      type: 'list',
      default: '`base:+norm,+norm:+rope,+rope:+shared,base:+shared`',
      doc: '`bench/abStep.ts`: variant pairs to compare step by step',
    },
    {
      name: 'KIMINA_KEYS_POINTS',
      scope: 'bench',
      type: 'list',
      default: '`32,4096,12288`',
      doc: '`bench:decode:keys`: cached-token counts to measure at',
    },
    {
      name: 'KIMINA_KEYS_ROUNDS',
      scope: 'bench',
      type: 'number',
      default: '`2`',
      doc: '`bench:decode:keys`: rounds per engine',
    },
    {
      name: 'KIMINA_KEYS_STEPS',
      scope: 'bench',
      type: 'number',
      default: '`8`',
      doc: '`bench:decode:keys`: decode steps per point',
    },
    {
      name: 'KIMINA_KEYS_ONLY',
      scope: 'bench',
      type: 'list',
      default: '`capi,capi8,split,llama,genai`',
      doc: '`bench:decode:keys`: which engines run (a cut-down run names what it left out)',
    },
    {
      name: 'KIMINA_KEYS_LLAMA',
      scope: 'bench',
      type: 'list',
      default: '`off,on,q8`',
      doc: '`bench:decode:keys`: which llama.cpp settings run (flash attention off, on, on with a q8_0 cache)',
    },
    {
      name: 'KIMINA_HUGE_PAGES',
      scope: 'bench',
      type: 'string',
      default: '`on`',
      doc: "`off`: the C API path's benchmarks (bench/nativeDecode.ts) run without huge pages under the KV cache, for the A/B (backend/model/onnx/hugePages.ts)",
    },
    {
      name: 'KIMINA_ORT_LIBRARY',
      scope: 'bench',
      type: 'path',
      default: "onnxruntime-node's libonnxruntime",
      doc: "another libonnxruntime build for the C API path's benchmarks (bench/nativeDecode.ts, bench/profileNative.ts): the A/B of onnxruntime versions",
    },
    {
      name: 'KIMINA_PROFILE_ONLY',
      scope: 'bench',
      type: 'string',
      default: 'both',
      doc: '`bench/profileNative.ts`: `ours` or `genai` profiles only that engine',
    },
    {
      name: 'KIMINA_GPU_STEPS',
      scope: 'bench',
      type: 'number',
      default: '`32`',
      doc: '`scripts/gpu-decode-check.sh` (bench/gpuDecode.ts): decode steps per point',
    },
    {
      name: 'KIMINA_VLLM_PYTHON',
      scope: 'bench',
      type: 'path',
      default: '`test/trainer/.venv/bin/python`',
      doc: '`scripts/gpu-decode-check.sh`: a Python with vllm, for the vLLM column (skipped without it)',
    },
    {
      name: 'KIMINA_BENCH_MEMORY',
      scope: 'bench',
      type: 'list',
      default: '`own,shared`',
      doc: '`bench:decode`: cache layouts of the memory part (every row its own cache, a shared prompt)',
    },
    {
      name: 'KIMINA_BENCH_ROUNDS',
      scope: 'bench',
      type: 'number',
      default: '`2`',
      doc: '`bench:decode`: rounds per engine',
    },
    {
      name: 'KIMINA_BENCH_STEPS',
      scope: 'bench',
      type: 'number',
      default: '`12`',
      doc: '`bench:decode`: tokens per round; `bench:train`: GRPO steps',
    },
    {
      name: 'KIMINA_BENCH_THREADS',
      scope: 'bench',
      type: 'number',
      default: '`2`',
      doc: '`bench:decode`: CPU threads',
    },
    {
      name: 'KIMINA_BENCH_ONLY',
      scope: 'bench',
      type: 'comma-separated',
      default: '`ours,llama,tfjs`',
      doc: '`bench:decode`: which engines',
    },
    {
      name: 'KIMINA_BENCH_GENERATIONS',
      scope: 'bench',
      type: 'number',
      default: '`8`',
      doc: '`bench:train`: samples per prompt',
    },
    {
      name: 'KIMINA_BENCH_PROMPTS',
      scope: 'bench',
      type: 'number',
      default: '`4`',
      doc: '`bench:train`: prompts per step',
    },
    {
      name: 'KIMINA_BENCH_LENGTH',
      scope: 'bench',
      type: 'number',
      default: '`64`',
      doc: '`bench:train`: new tokens per sample',
    },
    { name: 'BENCH_CHECKS', scope: 'bench', type: 'number', default: '`1000`', doc: '`bench:verify`: checks in all' },
    { name: 'BENCH_REPLS', scope: 'bench', type: 'number', default: '`4`', doc: '`bench:verify`: REPLs' },
    {
      name: 'KIMINA_TEST_PARITY',
      scope: 'test',
      type: '`1`',
      default: 'unset: run when test/trainer/.venv exists',
      doc: "the transformers parity suite creates the trainer's test environment first if needed",
    },
    {
      name: 'KIMINA_TEST_ONLY',
      scope: 'test',
      type: 'comma-separated',
      default: 'every suite',
      doc: '`npm test`: run only these steps (typecheck, format, lint, build, trainer, unit, e2e)',
    },
    {
      name: 'KIMINA_TEST_MODEL_DIR',
      scope: 'test',
      type: 'path',
      default: 'unset (skipped)',
      doc: 'opt-in tests with a real model folder',
    },
    {
      name: 'KIMINA_TEST_LEAN_PROJECT',
      scope: 'test',
      type: 'path',
      default: 'unset (skipped)',
      doc: 'opt-in tests with a real Lean project',
    },
    {
      name: 'KIMINA_TEST_REPL_CLONE',
      scope: 'test',
      type: 'path',
      default: 'unset (skipped)',
      doc: 'opt-in test of the Lean setup table against a real clone of leanprover-community/repl',
    },
    {
      name: 'KIMINA_TEST_OPENAI_BASE_URL',
      scope: 'test',
      type: 'URL',
      default: 'unset (skipped)',
      doc: 'opt-in tests against a real OpenAI-compatible server',
    },
    {
      name: 'KIMINA_TEST_OPENAI_MODEL',
      scope: 'test',
      type: 'string',
      default: "the server's only model",
      doc: 'the model those tests ask for',
    },
    {
      name: 'KIMINA_TEST_HUB',
      scope: 'test',
      type: 'flag',
      default: 'unset (skipped)',
      doc: 'opt-in test that lists the default model on the real hub',
    },
    {
      name: 'KIMINA_CLIENT_PYTHON',
      scope: 'test',
      type: 'path',
      default: 'unset (skipped)',
      doc: 'a python with kimina-client, for the compatibility test',
    },
    {
      name: 'KIMINA_MINIF2F_DIR',
      scope: 'test',
      type: 'path',
      default: '`data/minif2f-lean4` in the repository',
      doc: 'the miniF2F copy the evaluation tests read',
    },
  ];

export interface VariableDoc {
  names: string[];
  key?: SettingKey;
  scope: Scope;
  type: string;
  default: string;
  doc: string;
}

/** Every variable, for docs and the check that nothing reads an undeclared one. */
export function allVariables(): VariableDoc[] {
  const backend = (Object.entries(declarations) as [SettingKey, Declaration<unknown>][]).map(
    ([key, d]): VariableDoc => ({
      names: [d.name, ...(d.also ?? [])],
      key,
      scope: 'backend',
      type: d.type,
      default: d.default,
      doc: d.doc,
    }),
  );
  return [...backend, ...otherVariables.map(({ name, ...rest }) => ({ names: [name], ...rest }))];
}

/** The table in docs/settings.md. */
export function settingsTable(): string {
  const rows = allVariables().map(
    (v) => `| ${v.names.map((n) => `\`${n}\``).join(' or ')} | ${v.scope} | ${v.type} | ${v.default} | ${v.doc} |`,
  );
  return ['| Variable | Read by | Type | Default | Meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}
