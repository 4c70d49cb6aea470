// `kimina lean setup`: builds leanprover-community/repl for a project's toolchain and checks that the
// project itself is built for the imports it will be asked about, reporting progress line by line.
// The repl revision comes from replRevision.ts (tag, branch, master commit). For a release repl has no revision
// for (v4.12.0, v4.13.0, Mathlib's v4.29.1 and v4.32.x, anything newer than repl's newest commit), the nearest
// older repl source is built with the project's own toolchain and must pass a smoke test (replSmoke.ts) before
// it is used; where it came from (commit, the release it was made for, the toolchain it was built with) is
// recorded and shown by `kimina lean status`. The flush fix is applied where ancestry says it is missing, and an
// unbuilt project is reported with the command that builds it (`lake exe cache get` for Mathlib's prebuilt
// files, then `lake build`), which `build: true` runs with progress.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensurePrivateDir, mkdirInside, removeInside } from '../store/safePaths';
import { replBinaryIn, setupReplDir } from './launch';
import { FLUSH_FIX_COMMIT, applyFlushFix, git, lacksFlushFix, resolveReplRevision } from './replRevision';
import { smokeTestRepl } from './replSmoke';
import { releaseTag, unsupportedToolchainReason } from './toolchain';

const elanHint =
  'Install Lean with elan: curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh (see https://github.com/leanprover/elan)';

interface ProjectBuildState {
  /** Modules the project will be asked to import. */
  imports: string[];
  /** Those with no .olean in the project's build or its packages' builds. */
  missing: string[];
  /** The command (run in the project folder) that builds them. */
  buildCommand: string;
}

export interface SetupResult {
  tag: string;
  dir: string;
  binary: string;
  built: boolean;
  /**
   * How the repl revision was found, and which commit it is. `nearest`: no revision for this release; `ref` is
   * the older release whose source was built with the project's toolchain.
   */
  revision: { how: string; ref: string; commit: string };
  /** For a `nearest` build: the toolchain it was built with and when its smoke test passed. */
  provenance?: ReplProvenance;
  /** True when the flush fix was applied on top of that revision. */
  flushFixApplied: boolean;
  /** The project's own build, checked after the REPL (and built when `build` was asked). */
  project: ProjectBuildState;
}

/** The settings setup reads, handed down: KIMINA_HOME (the builds go to its repl/), KIMINA_REPL_GIT_URL, KIMINA_REPL_FLUSH_FIX. */
export interface ReplSetupSettings {
  home: string;
  replGitUrl: string;
  replFlushFix?: string;
  /** The base environment lake and git run with, handed down by the root (Settings.childEnv). */
  childEnv: NodeJS.ProcessEnv;
}

export interface SetupOptions {
  repoUrl?: string;
  /** The flush fix's commit in that repository (default repl's 4fc1e6d). */
  flushFix?: string;
  /** Modules checks will import besides Mathlib (checked whenever the project depends on it). */
  imports?: string[];
  /** Run `lake exe cache get` (Mathlib projects) and `lake build` in the project when it is not built. */
  build?: boolean;
}

/** Thrown when the REPL is ready but the project is not built for its imports (and no build was asked). */
export class ProjectNotBuiltError extends Error {
  constructor(
    readonly result: SetupResult,
    message: string,
  ) {
    super(message);
  }
}

/** A REPL built from another release's repl source: what it is made of, and its smoke test. */
interface ReplProvenance {
  /** The repl commit, and the release its own lean-toolchain named. */
  commit: string;
  madeFor: string;
  /** The project's lean-toolchain it was built with. */
  builtWith: string;
  smokeTestPassedAt: string;
}

interface SetupMarker {
  commit: string;
  flushFixApplied: boolean;
  how: string;
  ref: string;
  provenance?: ReplProvenance;
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  onLine: (line: string) => void,
  keep = false,
): Promise<{ code: number; tail: string; log: string }> {
  return new Promise((resolve) => {
    let tail = '';
    let log = '';
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const feed = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-2000);
      if (keep) log = (log + text).slice(-1_000_000);
      for (const line of text.split(/[\r\n]/)) if (line.trim()) onLine(line.trimEnd());
    };
    child.stdout.on('data', feed);
    child.stderr.on('data', feed);
    child.on('error', (err) => resolve({ code: -1, tail: err.message, log: log + err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, tail, log: keep ? log : tail }));
  });
}

/** Runs `cmd --version` in `cwd` (lake inside the project, where elan picks the project's toolchain). */
async function have(cmd: string, cwd: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return (await run(cmd, ['--version'], cwd, env, () => {})).code === 0;
}

const CORE_ROOTS = new Set(['Init', 'Std', 'Lean', 'Lake']);

/** The packages of a project's lake-manifest.json (names, lowercased). */
function manifestPackages(projectDir: string): string[] {
  try {
    const manifest = JSON.parse(readFileSync(join(projectDir, 'lake-manifest.json'), 'utf8')) as {
      name?: unknown;
      packages?: Array<{ name?: unknown }>;
    };
    const names = (manifest.packages ?? []).map((p) => String(p?.name ?? '').toLowerCase());
    if (typeof manifest.name === 'string') names.push(`self:${manifest.name.toLowerCase()}`);
    return names;
  } catch {
    return [];
  }
}

function usesMathlib(projectDir: string): boolean {
  const names = manifestPackages(projectDir);
  return names.includes('mathlib') || names.includes('self:mathlib');
}

/** Where a module's .olean may lie: the project's build and each package's (Lake's `lib/lean`, older `lib`). */
function oleanCandidates(projectDir: string, module: string): string[] {
  const rel = `${module.split('.').join('/')}.olean`;
  const roots = [projectDir];
  const packages = join(projectDir, '.lake', 'packages');
  if (existsSync(packages)) for (const p of readdirSync(packages)) roots.push(join(packages, p));
  return roots.flatMap((r) => [join(r, '.lake', 'build', 'lib', 'lean', rel), join(r, '.lake', 'build', 'lib', rel)]);
}

/** Is the project built for Mathlib (when it depends on it) and `imports`? Toolchain modules are not checked. */
export function projectBuildState(projectDir: string, imports: string[] = []): ProjectBuildState {
  const mathlib = usesMathlib(projectDir);
  const wanted = [...new Set([...(mathlib ? ['Mathlib'] : []), ...imports])].filter((m) =>
    /^[\p{L}_][\p{L}\p{N}_'!?]*(?:\.[\p{L}_][\p{L}\p{N}_'!?]*)*$/u.test(m),
  );
  const missing = wanted.filter(
    (m) => !CORE_ROOTS.has(m.split('.')[0]) && !oleanCandidates(projectDir, m).some((c) => existsSync(c)),
  );
  return { imports: wanted, missing, buildCommand: mathlib ? 'lake exe cache get && lake build' : 'lake build' };
}

function notBuiltMessage(projectDir: string, state: ProjectBuildState): string {
  return (
    `the Lean project ${projectDir} is not built for ${state.missing.map((m) => `import ${m}`).join(', ')} ` +
    `(no .olean found): checks would fail with a missing-olean error. Build it with: cd ${JSON.stringify(projectDir)} && ${state.buildCommand}` +
    ' (or run `kimina lean setup --build`, or Set Up Lean → Build Project in VS Code)'
  );
}

/** Runs the project's build commands with progress; throws with lake's last lines when one fails. */
async function buildProject(
  projectDir: string,
  state: ProjectBuildState,
  env: NodeJS.ProcessEnv,
  onProgress: (line: string) => void,
): Promise<void> {
  const steps = state.buildCommand.split(' && ').map((c) => c.split(' '));
  for (const [cmd, ...args] of steps) {
    onProgress(`      $ ${[cmd, ...args].join(' ')}`);
    const r = await run(cmd, args, projectDir, env, (l) => onProgress(`      ${l}`));
    if (r.code !== 0)
      throw new Error(
        `\`${[cmd, ...args].join(' ')}\` failed in ${projectDir}: ${r.tail.trim().split('\n').slice(-3).join(' ')}`,
      );
  }
}

/** Writes a failed build's log beside the (removed) build folder, KIMINA_HOME/repl/<tag>.log; returns its path. */
function keepLog(replRoot: string, tag: string, text: string): string {
  const file = join(replRoot, `${tag}.log`);
  writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`);
  return file;
}

function readMarker(dir: string): SetupMarker | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, '.kimina-setup.json'), 'utf8')) as SetupMarker;
  } catch {
    return undefined;
  }
}

/** The answer when repl has nothing at all older than the release (docs/verifier.md, "Lean releases"). */
function noRevisionMessage(tag: string): string {
  return (
    `unsupported: leanprover-community/repl has no tag, branch or commit whose lean-toolchain names ${tag}, nor an older release's source to build with it. ` +
    `Build the REPL yourself and set KIMINA_REPL_PATH; without a REPL, checks fall back to \`lake env lean --json\`.`
  );
}

/** The last lines of a log, for an error message. */
function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}

/** The provenance line `kimina lean status` shows for a REPL set up for `tag`, when setup recorded one. */
export function replProvenance(home: string, tag: string): string | undefined {
  const marker = readMarker(setupReplDir(home, tag));
  if (!marker) return undefined;
  const base = `repl ${marker.commit.slice(0, 12)} (${marker.how} ${marker.ref}${marker.flushFixApplied ? ', flush fix applied' : ''})`;
  const p = marker.provenance;
  return p
    ? `${base}: repl has no revision for ${tag}; the source made for ${p.madeFor}, built with the project's toolchain ${p.builtWith}, smoke test passed ${p.smokeTestPassedAt}`
    : base;
}

export async function setupRepl(
  projectDir: string,
  onProgress: (line: string) => void,
  settings: ReplSetupSettings,
  options: SetupOptions = {},
): Promise<SetupResult> {
  const { home, childEnv: env } = settings;
  const repoUrl = options.repoUrl ?? settings.replGitUrl;
  const fix = options.flushFix ?? settings.replFlushFix ?? FLUSH_FIX_COMMIT;
  if (!existsSync(join(projectDir, 'lean-toolchain')))
    throw new Error(`no lean-toolchain in ${projectDir}: pass --project with your Lean project's folder`);
  const toolchain = readFileSync(join(projectDir, 'lean-toolchain'), 'utf8');
  const tag = releaseTag(toolchain);
  if (!tag)
    throw new Error(
      `cannot set up the REPL for ${join(projectDir, 'lean-toolchain')}: ${unsupportedToolchainReason(toolchain)}`,
    );
  const dir = setupReplDir(home, tag);
  // The folder is deleted and re-cloned below: it must lie inside KIMINA_HOME/repl, symlinks resolved.
  const replRoot = join(ensurePrivateDir(home), 'repl');
  mkdirInside(home, replRoot, 0o700);
  const binary = replBinaryIn(dir); // repl.exe on Windows
  // lake runs inside the project: there elan picks the project's toolchain (outside it, elan without a
  // default toolchain reports lake as missing).
  if (!(await have('lake', projectDir, env)))
    throw new Error(`'lake' was not found on PATH (ran in ${projectDir}). ${elanHint}`);
  const marker = readMarker(dir);
  let result: SetupResult;
  if (existsSync(binary) && marker) {
    onProgress(
      `[1/4] REPL for ${tag} already built (${marker.how} ${marker.ref}, ${marker.commit.slice(0, 12)}${marker.flushFixApplied ? ', flush fix applied' : ''}): ${binary}`,
    );
    result = {
      tag,
      dir,
      binary,
      built: false,
      revision: { how: marker.how, ref: marker.ref, commit: marker.commit },
      flushFixApplied: marker.flushFixApplied,
      ...(marker.provenance ? { provenance: marker.provenance } : {}),
      project: projectBuildState(projectDir, options.imports),
    };
  } else {
    if (!(await have('git', projectDir, env)))
      throw new Error("'git' was not found on PATH; install git, or build the REPL yourself and set KIMINA_REPL_PATH");
    onProgress(`[1/4] cloning ${repoUrl} into ${dir}`);
    removeInside(replRoot, dir);
    // A full clone (the repository is small): resolving a branch or master commit and deciding the flush
    // fix by ancestry both need the history.
    const clone = await run('git', ['clone', '--no-checkout', '--quiet', repoUrl, dir], dirname(dir), env, (l) =>
      onProgress(`      ${l}`),
    );
    if (clone.code !== 0) {
      throw new Error(
        `could not clone ${repoUrl} (offline?): ${clone.tail.trim().split('\n').slice(-2).join(' ')}. ` +
          'Alternatively build the REPL yourself and set KIMINA_REPL_PATH; without it `kimina serve` falls back to `lake env lean --json`.',
      );
    }
    const cloned = { dir, env };
    const resolved = await resolveReplRevision(cloned, tag);
    if (resolved.how === 'none' && !resolved.nearest) {
      removeInside(replRoot, dir);
      throw new Error(noRevisionMessage(tag));
    }
    // No revision for this release: the nearest older release's source, built with the project's toolchain.
    const nearest = resolved.how === 'none' ? resolved.nearest : undefined;
    const revision =
      resolved.how === 'none'
        ? { how: 'nearest', ref: resolved.nearest!.tag, commit: resolved.nearest!.commit }
        : { how: resolved.how, ref: resolved.ref, commit: resolved.commit };
    await git(cloned, ['checkout', '--quiet', '--detach', revision.commit]);
    const missingFix = await lacksFlushFix(cloned, revision.commit, fix);
    if (missingFix) await applyFlushFix(cloned, fix);
    const fixNote = missingFix
      ? `; flush fix ${fix.slice(0, 7)} applied (missing by ancestry)`
      : `; has the flush fix ${fix.slice(0, 7)}`;
    if (nearest) {
      writeFileSync(join(dir, 'lean-toolchain'), toolchain.endsWith('\n') ? toolchain : `${toolchain}\n`);
      onProgress(
        `[2/4] repl has no revision for ${tag}: building the nearest older source, ${revision.commit.slice(0, 12)} (made for ${nearest.tag}), with the project's toolchain ${toolchain.trim()}${fixNote}`,
      );
    } else
      onProgress(`[2/4] repl for ${tag}: ${revision.how} ${revision.ref} (${revision.commit.slice(0, 12)})${fixNote}`);
    onProgress(`[3/4] lake build (first build takes a few minutes)`);
    const build = await run('lake', ['build'], dir, env, (l) => onProgress(`      ${l}`), true);
    if (build.code !== 0 || !existsSync(binary)) {
      if (!nearest)
        throw new Error(`lake build failed in ${dir}: ${build.tail.trim().split('\n').slice(-3).join(' ')}`);
      const log = keepLog(replRoot, tag, `$ lake build   (in ${dir}, ${toolchain.trim()})\n${build.log}`);
      removeInside(replRoot, dir);
      throw new Error(
        `unsupported: repl has no revision for ${tag}, and its nearest older source (${revision.commit.slice(0, 12)}, made for ${nearest.tag}) does not build with ${toolchain.trim()}. ` +
          `Its build log (${log}) ends:\n${lastLines(build.log, 20)}\nBuild a REPL for ${tag} yourself and set KIMINA_REPL_PATH; without one, checks fall back to \`lake env lean --json\`.`,
      );
    }
    let provenance: ReplProvenance | undefined;
    if (nearest) {
      onProgress(`      smoke test: a theorem and #print axioms through lake env ${binary}`);
      const smoke = await smokeTestRepl(binary, projectDir, env);
      if (!smoke.ok) {
        const log = keepLog(
          replRoot,
          tag,
          `$ lake build   (in ${dir}, ${toolchain.trim()})\n${build.log}\n${smoke.log}`,
        );
        removeInside(replRoot, dir);
        throw new Error(
          `unsupported: repl has no revision for ${tag}; its nearest older source (${revision.commit.slice(0, 12)}, made for ${nearest.tag}) built with ${toolchain.trim()} but failed the smoke test: ${smoke.reason}. ` +
            `The exchange (${log}):\n${lastLines(smoke.log, 20)}\nBuild a REPL for ${tag} yourself and set KIMINA_REPL_PATH; without one, checks fall back to \`lake env lean --json\`.`,
        );
      }
      provenance = {
        commit: revision.commit,
        madeFor: nearest.tag,
        builtWith: toolchain.trim(),
        smokeTestPassedAt: new Date().toISOString(),
      };
      onProgress(
        `      smoke test passed: ${revision.commit.slice(0, 12)} (made for ${nearest.tag}) answers on ${tag}`,
      );
    }
    const written: SetupMarker = {
      commit: revision.commit,
      flushFixApplied: missingFix,
      how: revision.how,
      ref: revision.ref,
      ...(provenance ? { provenance } : {}),
    };
    writeFileSync(join(dir, '.kimina-setup.json'), JSON.stringify(written) + '\n');
    result = {
      tag,
      dir,
      binary,
      built: true,
      revision: { how: revision.how, ref: revision.ref, commit: revision.commit },
      flushFixApplied: missingFix,
      ...(provenance ? { provenance } : {}),
      project: projectBuildState(projectDir, options.imports),
    };
  }
  let state = result.project;
  if (state.missing.length && options.build) {
    onProgress(
      `[4/4] building the project for ${state.missing.map((m) => `import ${m}`).join(', ')}: ${state.buildCommand}`,
    );
    await buildProject(projectDir, state, env, onProgress);
    state = projectBuildState(projectDir, options.imports);
    result.project = state;
    if (state.missing.length)
      throw new ProjectNotBuiltError(result, `after ${state.buildCommand}, ${notBuiltMessage(projectDir, state)}`);
  }
  if (state.missing.length) {
    onProgress(`[4/4] REPL ready: ${binary}; project not built`);
    throw new ProjectNotBuiltError(result, notBuiltMessage(projectDir, state));
  }
  onProgress(
    `[4/4] REPL ready: ${binary}; project built${state.imports.length ? ` for ${state.imports.map((m) => `import ${m}`).join(', ')}` : ''}`,
  );
  return result;
}
