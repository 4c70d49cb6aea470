// Chat templates render in a child process of their own (templateWorker.ts; dist/template-worker.js next to a
// bundle), one render at a time: a template is the checkpoint's code, and V8 aborts the whole process on an
// allocation past its heap limit (`range(100000000)` builds one array of 10^8 items), which a worker thread's
// resourceLimits do not prevent (tried: node 20 aborted the test process). The child runs with a heap limit
// (--max-old-space-size) and an empty environment (it needs none); a render that passes its time is stopped by
// killing the child, one that passes its heap ends the child; either way the caller gets an error naming the
// template and the next render starts a fresh child.
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** How long, how much heap and how long a prompt one render may take. */
export interface RenderLimits {
  timeMs: number;
  heapMb: number;
  maxChars: number;
}

/** Real prompts render in milliseconds, in a few MB, to well under a model's context. */
export const DEFAULT_RENDER_LIMITS: RenderLimits = { timeMs: 10_000, heapMb: 256, maxChars: 16 * 1024 * 1024 };

/** One render, as the child receives it. */
export interface RenderJob {
  id: number;
  source: string;
  tokens: Record<string, string>;
  messages: { role: string; content: string }[];
  addGenerationPrompt: boolean;
  maxChars: number;
}

/** How long the renderer may take to load (its time limit per render starts after). */
const START_MS = 60_000;

type Reply = { ready: true } | { id: number; ok: boolean; text?: string; message?: string };

function childScript(): string | undefined {
  const candidates = __filename.endsWith('.ts')
    ? [join(__dirname, 'templateWorker.ts')]
    : [join(__dirname, 'template-worker.js'), join(__dirname, 'templateWorker.js')];
  return candidates.find((p) => existsSync(p));
}

function startChild(script: string, heapMb: number): ChildProcess {
  const heap = `--max-old-space-size=${heapMb}`;
  // source checkouts (tests under tsx): the child loads tsx's hooks first; the bundle never comes here
  const execArgv = script.endsWith('.ts') ? ['--require', require.resolve(['tsx', 'cjs'].join('/')), heap] : [heap];
  return fork(script, [], { env: {}, execArgv, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
}

interface Shared {
  child: ChildProcess;
  heapMb: number;
  ready: Promise<void>;
}
let shared: Shared | undefined;
let queue: Promise<unknown> = Promise.resolve();
let nextId = 0;

function idle(child: ChildProcess): void {
  child.unref();
  child.channel?.unref();
}

function busy(child: ChildProcess): void {
  child.ref();
  child.channel?.ref();
}

function started(script: string, heapMb: number): Shared {
  const child = startChild(script, heapMb);
  const ready = new Promise<void>((resolve, reject) => {
    const slow = setTimeout(() => reject(new Error(`it did not start in ${START_MS / 1000} s`)), START_MS);
    slow.unref();
    const onMessage = (m: Reply) => {
      if (!('ready' in m)) return;
      clearTimeout(slow);
      child.off('message', onMessage);
      resolve();
    };
    child.on('message', onMessage);
    child.once('exit', (code, signal) => reject(new Error(`it exited (${signal ?? `code ${code}`})`)));
    child.once('error', reject);
  });
  ready.catch(() => undefined);
  return { child, heapMb, ready };
}

function stop(s: Shared): void {
  if (shared === s) shared = undefined;
  s.child.kill('SIGKILL');
}

function renderOnce(job: Omit<RenderJob, 'id'>, limits: RenderLimits, origin: string): Promise<string> {
  const script = childScript();
  if (!script) return Promise.reject(new Error(`${origin}: the template renderer script is missing`));
  if (shared && (shared.heapMb !== limits.heapMb || shared.child.exitCode !== null || shared.child.signalCode !== null))
    stop(shared);
  shared ??= started(script, limits.heapMb);
  const s = shared;
  const { child } = s;
  busy(child);
  const id = ++nextId;
  const render = () =>
    new Promise<string>((resolve, reject) => {
      const done = (err: Error | null, text?: string) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        idle(child);
        if (err) reject(err);
        else resolve(text!);
      };
      const onMessage = (m: Reply) => {
        if ('ready' in m || m.id !== id) return;
        done(m.ok ? null : new Error(`${origin}: rendering failed: ${m.message}`), m.text);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (shared === s) shared = undefined;
        done(
          new Error(
            `${origin}: rendering stopped: the renderer ended (${signal ?? `code ${code}`}), most likely past its ${limits.heapMb} MB memory limit`,
          ),
        );
      };
      const timer = setTimeout(() => {
        child.off('exit', onExit);
        stop(s);
        done(
          new Error(
            `${origin}: rendering stopped after ${limits.timeMs / 1000} s (a loop in the template that does not end, or one too long)`,
          ),
        );
      }, limits.timeMs);
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.send({ ...job, id });
    });
  return s.ready.then(render, (err: Error) => {
    stop(s);
    idle(child);
    throw new Error(`${origin}: the template renderer did not start (${err.message})`);
  });
}

/** Renders in the child process, one render at a time, within `limits`. */
export function renderOffThread(job: Omit<RenderJob, 'id'>, limits: RenderLimits, origin: string): Promise<string> {
  const run = queue.then(() => renderOnce(job, limits, origin));
  queue = run.catch(() => undefined);
  return run;
}
