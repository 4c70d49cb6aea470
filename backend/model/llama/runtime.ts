// node-llama-cpp, installed on first use into the user's Kimina home (engines/node-llama-cpp-<version>/) and
// loaded by dynamic import. Why not a dependency in package.json: its prebuilt llama.cpp binaries are separate
// npm packages per platform and GPU (on Linux x64: CPU 29 MB, Vulkan 81 MB, CUDA 181 MB + 357 MB of CUDA
// libraries; about 730 MB with every optional one, measured with 3.21.1), too large for the per-platform VSIX
// (7-36 MB today) and for every `npm ci`; a VSIX could carry the CPU build at most, which gives no GPU. Installed
// here, each machine gets exactly the binaries it can use: Metal on Apple silicon, Vulkan on Linux and Windows
// x64, CUDA where an NVIDIA driver answers. The install runs npm (on the PATH, or beside kimina.nodePath's
// Node); with no npm the engine says so and the onnx engine runs instead (docs/llama-engine.md).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NodeLlamaCpp } from './binding';

/** The version the engine is written and tested against (the newest whose macOS and Windows binaries npm serves). */
const NODE_LLAMA_CPP_VERSION = '3.21.1';

/** node-llama-cpp cannot be installed or loaded here: the message says why. */
export class LlamaUnavailable extends Error {}

/** Where node-llama-cpp is installed for a Kimina home. */
export function runtimeDirOf(home: string): string {
  return join(home, 'engines', `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}`);
}

function hasNvidiaDriver(env: NodeJS.ProcessEnv | undefined): boolean {
  if (process.platform === 'linux' && existsSync('/proc/driver/nvidia/version')) return true;
  try {
    return spawnSync('nvidia-smi', ['-L'], { env, timeout: 5000, stdio: 'ignore' }).status === 0;
  } catch {
    return false;
  }
}

/**
 * The GPU llama.cpp could use here, in words, or undefined: an NVIDIA driver (CUDA), or Apple silicon (Metal).
 * (Vulkan drivers are not looked for: the engine chooser does not install llama.cpp for them unasked.)
 */
export function llamaGpuHere(
  env: NodeJS.ProcessEnv | undefined,
  platform: string = process.platform,
  arch: string = process.arch,
  nvidia: (env: NodeJS.ProcessEnv | undefined) => boolean = hasNvidiaDriver,
): string | undefined {
  if (platform === 'darwin' && arch === 'arm64') return 'Apple silicon (Metal)';
  if ((platform === 'linux' || platform === 'win32') && arch === 'x64' && nvidia(env)) return 'an NVIDIA driver (CUDA)';
  return undefined;
}

/** Whether node-llama-cpp is installed in `dir` (runtimeDirOf), without loading it. */
export function nodeLlamaCppInstalled(dir: string): boolean {
  return existsSync(join(dir, 'node_modules', 'node-llama-cpp', 'dist', 'index.js'));
}

/**
 * The prebuilt binary packages (@node-llama-cpp/<name>) for a platform: the CPU build, and with `gpu` the GPU
 * builds this machine can use (CUDA only where an NVIDIA driver is present).
 */
export function prebuiltPackages(platform: string, arch: string, gpu: boolean, nvidia: boolean) {
  const key = `${platform}-${arch}`;
  const cpu: Record<string, string> = {
    'linux-x64': 'linux-x64',
    'linux-arm64': 'linux-arm64',
    'darwin-arm64': 'mac-arm64-metal',
    'darwin-x64': 'mac-x64',
    'win32-x64': 'win-x64',
    'win32-arm64': 'win-arm64',
  };
  if (!cpu[key]) throw new LlamaUnavailable(`node-llama-cpp ships no prebuilt llama.cpp for ${key}`);
  const out = [cpu[key]];
  const os = platform === 'win32' ? 'win' : 'linux';
  if (gpu && arch === 'x64' && (platform === 'linux' || platform === 'win32')) {
    out.push(`${os}-x64-vulkan`);
    if (nvidia) out.push(`${os}-x64-cuda`, `${os}-x64-cuda-ext`);
  }
  return out.map((p) => `@node-llama-cpp/${p}`);
}

const MARKER = '.kimina-installed.json';

function installed(dir: string): string[] {
  try {
    return (JSON.parse(readFileSync(join(dir, MARKER), 'utf8')) as { packages: string[] }).packages;
  } catch {
    return [];
  }
}

/** node-llama-cpp's version and the binary packages installed in `dir`, in words; undefined where none finished. */
export function installedRuntimeWords(dir: string): string | undefined {
  const packages = installed(dir);
  try {
    const manifest = join(dir, 'node_modules', 'node-llama-cpp', 'package.json');
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    return packages.length ? `${version} with ${packages.join(', ')}` : undefined;
  } catch {
    return undefined;
  }
}

/** How to start npm: the command and whether through a shell. */
export interface NpmCommand {
  command: string;
  shell: boolean;
}

/**
 * npm next to the Node that runs the backend (a set kimina.nodePath), else the one on the PATH. On Windows npm is
 * a .cmd, which Node starts only through a shell (cmd.exe); the shell reads the command line, so the path is
 * quoted: Node's default folder is C:\Program Files\nodejs, and a space (or an `&` in a user name) would cut it.
 */
export function npmCommand(
  platform: string = process.platform,
  execPath: string = process.execPath,
  inElectron: boolean = Boolean(process.versions.electron),
): NpmCommand {
  const windows = platform === 'win32';
  const name = windows ? 'npm.cmd' : 'npm';
  const beside = join(dirname(execPath), name);
  const command = existsSync(beside) && !inElectron ? beside : name;
  return windows ? { command: `"${command}"`, shell: true } : { command, shell: false };
}

function runNpm(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  npm: NpmCommand,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(npm.command, args, {
      cwd,
      env,
      shell: npm.shell,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal, // an abort kills npm (the marker is written only after a finished install)
    });
    let tail = '';
    const keep = (d: Buffer) => {
      tail = (tail + d.toString()).slice(-2000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (e) =>
      reject(
        e.name === 'AbortError'
          ? new Error('the install of node-llama-cpp was cancelled')
          : new LlamaUnavailable(
              `installing node-llama-cpp needs npm, which did not start (${e.message}); install Node.js 20+ with npm, or run \`npm install --prefix ${cwd} node-llama-cpp@${NODE_LLAMA_CPP_VERSION}\` yourself`,
            ),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new LlamaUnavailable(`npm install of node-llama-cpp failed (exit ${code}): ${tail.trim()}`));
    });
  });
}

/** A lock untouched this long holds nothing: its process died (the holder touches it every minute). */
const STALE_LOCK_MS = 5 * 60_000;

/**
 * Runs `fn` holding `dir`.lock (a directory: mkdir is atomic), so two backends starting at once (two windows, the
 * CLI beside the editor) do not run npm in one folder together; the second waits, then finds the install done.
 */
async function withInstallLock<T>(dir: string, log: (line: string) => void, fn: () => Promise<T>): Promise<T> {
  const lock = `${dir}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  let said = false;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > STALE_LOCK_MS) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!said) log(`llama: another process is installing node-llama-cpp into ${dir}; waiting for it`);
      said = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const touch = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(lock, now, now);
    } catch {
      /* gone: the next holder's */
    }
  }, 60_000);
  touch.unref();
  try {
    return await fn();
  } finally {
    clearInterval(touch);
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether `dir` holds node-llama-cpp with every one of `packages` (the marker lists what an install finished). */
function hasPackages(dir: string, packages: string[]): boolean {
  const have = new Set(installed(dir));
  return existsSync(join(dir, 'node_modules', 'node-llama-cpp', 'package.json')) && packages.every((p) => have.has(p));
}

/**
 * Installs node-llama-cpp and the given binary packages into `dir` (nothing when they are there already), one
 * process at a time.
 */
export async function installNodeLlamaCpp(
  dir: string,
  packages: string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  npm: NpmCommand = npmCommand(),
  signal?: AbortSignal,
): Promise<void> {
  if (hasPackages(dir, packages)) return;
  await withInstallLock(dir, log, async () => {
    if (hasPackages(dir, packages)) return; // another process installed them while this one waited
    mkdirSync(dir, { recursive: true });
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) writeFileSync(manifest, '{ "name": "kimina-llama-runtime", "private": true }\n');
    const all = [...new Set([...installed(dir), ...packages])];
    log(`llama: installing node-llama-cpp ${NODE_LLAMA_CPP_VERSION} with ${all.join(', ')} into ${dir} (once)`);
    // Optional dependencies (every platform's binaries) left out; the wanted ones are named. No install scripts:
    // node-llama-cpp's postinstall only builds from source where no prebuilt binary fits, which the engine never uses.
    await runNpm(
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--omit=optional',
        '--ignore-scripts',
        '--loglevel=error',
        '--save-exact',
        `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`,
        ...all.map((p) => `${p}@${NODE_LLAMA_CPP_VERSION}`),
      ],
      dir,
      env,
      npm,
      signal,
    );
    writeFileSync(join(dir, MARKER), JSON.stringify({ packages: all }) + '\n');
  });
}

export interface LoadRuntimeOptions {
  /**
   * Install what is missing, running npm (and nvidia-smi, to see whether CUDA can be used) in this environment
   * (Settings.childEnv); without it only what is installed loads.
   */
  installWith?: NodeJS.ProcessEnv;
  /** Also install the GPU builds this machine can use (default true). */
  gpu?: boolean;
  log?: (line: string) => void;
  /** Cancels the install (npm is killed). */
  signal?: AbortSignal;
}

/** node-llama-cpp from `dir`, installed first when needed; a LlamaUnavailable error says why it cannot be. */
export async function loadNodeLlamaCpp(dir: string, options: LoadRuntimeOptions = {}): Promise<NodeLlamaCpp> {
  const log = options.log ?? (() => undefined);
  const entry = join(dir, 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
  const env = options.installWith;
  if (env) {
    const gpu = options.gpu !== false;
    const packages = prebuiltPackages(process.platform, process.arch, gpu, gpu && hasNvidiaDriver(env));
    await installNodeLlamaCpp(dir, packages, env, log, npmCommand(), options.signal);
  } else if (!nodeLlamaCppInstalled(dir)) throw new LlamaUnavailable(`node-llama-cpp is not installed in ${dir}`);
  try {
    // A file URL: node-llama-cpp is an ES module outside the bundle.
    return (await import(pathToFileURL(entry).href)) as NodeLlamaCpp;
  } catch (e) {
    throw new LlamaUnavailable(`node-llama-cpp in ${dir} does not load: ${(e as Error).message}`);
  }
}
