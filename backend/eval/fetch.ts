// `kimina eval fetch minif2f`: gets the Lean 4 miniF2F files (git clone, or a GitHub archive when
// git is missing), checks them (counts, each file parses into an accepted statement) and reads the
// Lean and Mathlib versions they were written for.
import { spawnSync } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import axios from 'axios';
import { loadBenchmark } from './benchmark';
import { statementProblems } from './statementCheck';

const MINIF2F = {
  git: 'https://github.com/yangky11/miniF2F-lean4.git',
  archive: (ref: string) => `https://github.com/yangky11/miniF2F-lean4/archive/${ref}.tar.gz`,
  /** Files per split in the upstream repository (MiniF2F/Test, MiniF2F/Valid). */
  expected: { test: 244, valid: 244 } as Record<string, number>,
};

export interface FetchOptions {
  dest: string;
  method: 'git' | 'archive' | 'auto';
  /** Git URL (method git) or archive URL (method archive); defaults to GitHub. */
  url?: string;
  /** Branch, tag or commit; default: the default branch (git) or `refs/heads/main` (archive). */
  ref?: string;
  /** Replace an existing folder. */
  force?: boolean;
  log?: (line: string) => void;
  /** The base environment git and tar run with, handed down by the root (Settings.childEnv). */
  env: NodeJS.ProcessEnv;
}

export interface BenchmarkVersions {
  leanToolchain: string | null;
  mathlib: { rev: string | null; inputRev: string | null; url: string | null } | null;
  /** Where each fact came from. */
  sources: string[];
}

export interface BenchmarkCheck {
  root: string;
  counts: Record<string, number>;
  /** `file: problem` for every file the prover would not accept, and count mismatches. */
  problems: string[];
  versions: BenchmarkVersions;
}

function hasGit(env: NodeJS.ProcessEnv): boolean {
  return spawnSync('git', ['--version'], { stdio: 'ignore', env }).status === 0;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): void {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8' });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`,
    );
}

async function fetchGit(url: string, ref: string | undefined, into: string, env: NodeJS.ProcessEnv): Promise<void> {
  if (ref && /^[0-9a-f]{7,40}$/i.test(ref)) {
    run('git', ['clone', '--quiet', url, into], env);
    run('git', ['checkout', '--quiet', ref], env, into);
  } else {
    run('git', ['clone', '--quiet', '--depth', '1', ...(ref ? ['--branch', ref] : []), url, into], env);
  }
}

async function fetchArchive(url: string, into: string, env: NodeJS.ProcessEnv): Promise<void> {
  const work = mkdtempSync(join(dirname(into), '.fetch-'));
  try {
    const file = join(work, 'archive.tar.gz');
    let response;
    try {
      response = await axios.get(url, { responseType: 'stream', maxRedirects: 5, timeout: 120_000 });
    } catch (e) {
      throw new Error(`download of ${url} failed: ${(e as Error).message}`);
    }
    await pipeline(response.data, createWriteStream(file));
    const out = join(work, 'x');
    mkdirSync(out);
    run('tar', ['-xzf', file, '-C', out], env);
    // GitHub archives hold one top folder (repo-ref/); use it when that is all there is.
    const top = readdirSync(out);
    const root = top.length === 1 && statSync(join(out, top[0])).isDirectory() ? join(out, top[0]) : out;
    renameSync(root, into);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Downloads miniF2F into `dest` (unless it is already there) and checks it. */
export async function fetchMiniF2F(options: FetchOptions): Promise<BenchmarkCheck> {
  const log = options.log ?? (() => {});
  const dest = options.dest;
  if (existsSync(dest) && readdirSync(dest).length > 0) {
    if (!options.force) {
      log(`${dest} exists; checking it (pass --force to download again)`);
      return checkMiniF2F(dest);
    }
    rmSync(dest, { recursive: true, force: true });
  }
  mkdirSync(dirname(dest), { recursive: true });
  if (existsSync(dest)) rmSync(dest, { recursive: true, force: true });
  const method = options.method === 'auto' ? (hasGit(options.env) ? 'git' : 'archive') : options.method;
  if (method === 'git') {
    const url = options.url ?? MINIF2F.git;
    log(`git clone ${url}${options.ref ? ` (${options.ref})` : ''} → ${dest}`);
    await fetchGit(url, options.ref, dest, options.env);
  } else {
    const url = options.url ?? MINIF2F.archive(options.ref ?? 'refs/heads/main');
    log(`downloading ${url} → ${dest}`);
    await fetchArchive(url, dest, options.env);
  }
  return checkMiniF2F(dest);
}

/** Lean toolchain from `lean-toolchain`; Mathlib from `lake-manifest.json`, else the lakefile's `require`. */
export function readVersions(root: string): BenchmarkVersions {
  const sources: string[] = [];
  let leanToolchain: string | null = null;
  const toolchainFile = join(root, 'lean-toolchain');
  if (existsSync(toolchainFile)) {
    leanToolchain = readFileSync(toolchainFile, 'utf8').trim() || null;
    sources.push('lean-toolchain');
  }
  let mathlib: BenchmarkVersions['mathlib'] = null;
  const manifest = join(root, 'lake-manifest.json');
  if (existsSync(manifest)) {
    try {
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as {
        packages?: { name?: string; rev?: string; inputRev?: string; url?: string }[];
      };
      const pkg = m.packages?.find((p) => p.name === 'mathlib');
      if (pkg) {
        mathlib = { rev: pkg.rev ?? null, inputRev: pkg.inputRev ?? null, url: pkg.url ?? null };
        sources.push('lake-manifest.json');
      }
    } catch (e) {
      sources.push(`lake-manifest.json unreadable (${(e as Error).message})`);
    }
  }
  if (!mathlib) {
    const leanLakefile = join(root, 'lakefile.lean');
    const tomlLakefile = join(root, 'lakefile.toml');
    if (existsSync(leanLakefile)) {
      const m = /require\s+"?mathlib"?\s+from\s+git\s+"([^"]+)"(?:\s*@\s*"([^"]+)")?/.exec(
        readFileSync(leanLakefile, 'utf8'),
      );
      if (m) {
        mathlib = { rev: null, inputRev: m[2] ?? null, url: m[1] };
        sources.push('lakefile.lean');
      }
    } else if (existsSync(tomlLakefile)) {
      const text = readFileSync(tomlLakefile, 'utf8');
      const block = text
        .split(/\[\[require\]\]/)
        .slice(1)
        .find((b) => /name\s*=\s*"mathlib"/.test(b));
      if (block) {
        mathlib = {
          rev: /rev\s*=\s*"([^"]+)"/.exec(block)?.[1] ?? null,
          inputRev: null,
          url: /git\s*=\s*"([^"]+)"/.exec(block)?.[1] ?? null,
        };
        sources.push('lakefile.toml');
      }
    }
  }
  return { leanToolchain, mathlib, sources };
}

/** Counts the splits, parses every file, and reads the versions. */
export function checkMiniF2F(root: string): BenchmarkCheck {
  const problems: string[] = [];
  const loaded = loadBenchmark(root);
  const counts: Record<string, number> = {};
  for (const p of loaded.problems) counts[p.split ?? 'none'] = (counts[p.split ?? 'none'] ?? 0) + 1;
  for (const [split, n] of Object.entries(MINIF2F.expected)) {
    if ((counts[split] ?? 0) !== n) problems.push(`${split}: ${counts[split] ?? 0} files, expected ${n}`);
  }
  for (const file of loaded.skipped) {
    const text = readFileSync(file, 'utf8');
    // Aggregator files (only `import` lines) are expected; anything else without a theorem is not.
    if (text.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('import')))
      problems.push(`${file}: no theorem found`);
  }
  for (const p of loaded.problems) {
    if (basename(p.origin, '.lean') !== p.theorem)
      problems.push(`${p.origin}: theorem '${p.theorem}' does not match the file name`);
    for (const issue of statementProblems(p.code, p.theorem)) problems.push(`${p.origin}: ${issue}`);
  }
  return { root, counts, problems, versions: readVersions(root) };
}

/** A few lines for people: what was found and what Lean/Mathlib it needs. */
export function describeCheck(check: BenchmarkCheck): string[] {
  const v = check.versions;
  const lines = [
    `miniF2F at ${check.root}: ${Object.entries(check.counts)
      .map(([s, n]) => `${n} ${s}`)
      .join(', ')}`,
  ];
  lines.push(
    check.problems.length === 0
      ? 'every file parses into a statement the prover accepts'
      : `${check.problems.length} problem(s):`,
  );
  lines.push(...check.problems.slice(0, 20).map((p) => `  ${p}`));
  if (check.problems.length > 20) lines.push(`  … and ${check.problems.length - 20} more`);
  lines.push(`Lean toolchain: ${v.leanToolchain ?? 'unknown (no lean-toolchain file)'}`);
  const m = v.mathlib;
  lines.push(
    `Mathlib: ${m ? [m.inputRev, m.rev ? `rev ${m.rev}` : null].filter(Boolean).join(', ') || 'unpinned' : 'unknown (no lake-manifest.json or lakefile)'}`,
  );
  lines.push(
    'Proofs must be checked with these versions. Build the project and its REPL, then point the verifier at it:',
  );
  lines.push(`  cd ${check.root} && lake exe cache get && lake build`);
  lines.push(`  kimina lean setup --project ${check.root}`);
  lines.push(`  export KIMINA_LEAN_PROJECT=${check.root}`);
  return lines;
}
