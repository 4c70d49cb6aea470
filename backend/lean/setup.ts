// `kimina lean setup`: builds leanprover-community/repl for a project's toolchain (git clone at the
// matching tag, lake build), reporting progress line by line.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { kiminaHome, setting } from '../settings/settings';
import { ensurePrivateDir, mkdirInside, removeInside } from '../store/safePaths';
import { replBinaryIn, setupReplDir } from './launch';
import { releaseTag, unsupportedToolchainReason } from './toolchain';

export const elanHint =
  'Install Lean with elan: curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh (see https://github.com/leanprover/elan)';

export interface SetupResult {
  tag: string;
  dir: string;
  binary: string;
  built: boolean;
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  onLine: (line: string) => void,
): Promise<{ code: number; tail: string }> {
  return new Promise((resolve) => {
    let tail = '';
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const feed = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2000);
      for (const line of text.split('\n')) if (line.trim()) onLine(line.trimEnd());
    };
    child.stdout.on('data', feed);
    child.stderr.on('data', feed);
    child.on('error', (err) => resolve({ code: -1, tail: err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, tail }));
  });
}

async function have(cmd: string): Promise<boolean> {
  return (await run(cmd, ['--version'], process.cwd(), () => {})).code === 0;
}

export async function setupRepl(
  projectDir: string,
  onProgress: (line: string) => void,
  repoUrl = setting('replGitUrl'),
): Promise<SetupResult> {
  if (!existsSync(join(projectDir, 'lean-toolchain')))
    throw new Error(`no lean-toolchain in ${projectDir}: pass --project with your Lean project's folder`);
  const toolchain = readFileSync(join(projectDir, 'lean-toolchain'), 'utf8');
  const tag = releaseTag(toolchain);
  if (!tag)
    throw new Error(
      `cannot set up the REPL for ${join(projectDir, 'lean-toolchain')}: ${unsupportedToolchainReason(toolchain)}`,
    );
  const dir = setupReplDir(tag);
  // The folder is deleted and re-cloned below: it must lie inside KIMINA_HOME/repl, symlinks resolved.
  const replRoot = join(ensurePrivateDir(kiminaHome()), 'repl');
  mkdirInside(kiminaHome(), replRoot, 0o700);
  const binary = replBinaryIn(dir); // repl.exe on Windows
  if (existsSync(binary)) {
    onProgress(`[1/3] REPL for ${tag} already built: ${binary}`);
    return { tag, dir, binary, built: false };
  }
  if (!(await have('lake'))) throw new Error(`'lake' was not found on PATH. ${elanHint}`);
  if (!(await have('git')))
    throw new Error("'git' was not found on PATH; install git, or build the REPL yourself and set KIMINA_REPL_PATH");
  onProgress(`[1/3] cloning ${repoUrl} at ${tag} into ${dir}`);
  removeInside(replRoot, dir);
  const clone = await run('git', ['clone', '--depth', '1', '--branch', tag, repoUrl, dir], dirname(dir), (l) =>
    onProgress(`      ${l}`),
  );
  if (clone.code !== 0) {
    throw new Error(
      `could not clone ${repoUrl} at ${tag} (offline, or no such tag?): ${clone.tail.trim().split('\n').slice(-2).join(' ')}. ` +
        'Alternatively build the REPL yourself and set KIMINA_REPL_PATH; without it `kimina serve` falls back to `lake env lean --json`.',
    );
  }
  onProgress(`[2/3] lake build (first build takes a few minutes)`);
  const build = await run('lake', ['build'], dir, (l) => onProgress(`      ${l}`));
  if (build.code !== 0 || !existsSync(binary))
    throw new Error(`lake build failed in ${dir}: ${build.tail.trim().split('\n').slice(-3).join(' ')}`);
  onProgress(`[3/3] REPL ready: ${binary}`);
  return { tag, dir, binary, built: true };
}
