// A local git repository rebuilt from the dated listing of leanprover-community/repl's refs and
// lean-toolchain files (test/lean/data/repl-refs.txt, written by scripts/repl-listing.sh from the real
// repository): the same commit graph (parents, author dates), branches, tags and lean-toolchain contents,
// so resolving a revision and deciding the flush fix by ancestry behave as on the real repl. Only
// REPL/Main.lean is a stand-in: two states, before and after the flush fix, with the line 4fc1e6d changed
// (repl commit 4fc1e6d1dda170e8f0a6b698dd5f7e17a9cf52b4, REPL/Main.lean), so a cherry-pick applies as there.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

const REAL_FLUSH_FIX = '4fc1e6d1dda170e8f0a6b698dd5f7e17a9cf52b4';
const here = import.meta.dirname;
const listingPath = join(here, 'data', 'repl-refs.txt');
const releasesPath = join(here, 'data', 'repl-releases.txt');

/** Main.lean before and after the flush fix: the changed line as repl has it, around a stand-in body. */
const MAIN_BEFORE =
  '-- TEST FIXTURE, a stand-in for REPL/Main.lean (repl commit 4fc1e6d changes the line below)\n' +
  'where loop : M IO Unit := do\n  IO.println "" -- easier to parse the output if there are blank lines\n  loop\n';
export const MAIN_AFTER =
  '-- TEST FIXTURE, a stand-in for REPL/Main.lean (repl commit 4fc1e6d changes the line below)\n' +
  'where loop : M IO Unit := do\n  printFlush "\\n" -- easier to parse the output if there are blank lines\n  loop\n';

interface ListedCommit {
  sha: string;
  date: string;
  parents: string[];
  toolchain?: string;
}

export interface ReplFixture {
  /** The bare repository (use it as KIMINA_REPL_GIT_URL). */
  dir: string;
  /** Real sha -> generated sha, and back. */
  generated: Map<string, string>;
  real: Map<string, string>;
  /** The generated commit of the flush fix. */
  flushFix: string;
}

export interface ExpectedRelease {
  release: string;
  how: string;
  ref: string;
  commit: string;
  flush: 'has' | 'apply' | '-';
}

export function expectedReleases(): ExpectedRelease[] {
  return readFileSync(releasesPath, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [release, how, ref, commit, flush] = l.split(' ');
      return { release, how, ref, commit, flush: flush as ExpectedRelease['flush'] };
    });
}

function gitRun(dir: string, args: string[], input?: string): string {
  const r = spawnSync('git', args, { cwd: dir, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** `2023-03-31T10:41:10+11:00` -> `1680219670 +1100` (git's raw date). */
function rawDate(iso: string): string {
  const m = /([+-])(\d\d):(\d\d)$/.exec(iso);
  const tz = m ? `${m[1]}${m[2]}${m[3]}` : '+0000';
  return `${Math.floor(Date.parse(iso) / 1000)} ${tz}`;
}

function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

/** Builds the repository from the listing with one `git fast-import` (well under a second). */
export function makeReplFixture(listing = listingPath): ReplFixture {
  const commits: ListedCommit[] = [];
  const refs: Array<{ kind: 'tag' | 'branch'; name: string; sha: string }> = [];
  for (const line of readFileSync(listing, 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const parts = line.split(' ');
    if (parts[0] === 'commit') {
      const [, sha, date, parents, toolchain] = parts;
      commits.push({
        sha,
        date,
        parents: parents === '-' ? [] : parents.split(','),
        toolchain: toolchain === '-' ? undefined : toolchain,
      });
    } else if (parts[0] === 'tag' || parts[0] === 'branch')
      refs.push({ kind: parts[0], name: parts[1], sha: parts[2] });
    else throw new Error(`bad listing line: ${line}`);
  }
  const mark = new Map<string, number>();
  const fixed = new Set<string>();
  let stream = '';
  commits.forEach((c, i) => {
    mark.set(c.sha, i + 1);
    if (c.sha === REAL_FLUSH_FIX || c.parents.some((p) => fixed.has(p))) fixed.add(c.sha);
    const subject =
      c.sha === REAL_FLUSH_FIX ? 'avoid buffering stdout to ensure immediate replies (#49)' : `listed commit`;
    const who = `Listing <listing@example.invalid> ${rawDate(c.date)}`;
    stream += `reset refs/heads/_generating\ncommit refs/heads/_generating\nmark :${i + 1}\nauthor ${who}\ncommitter ${who}\n`;
    stream += data(`${subject}\n\nreal ${c.sha}\n`);
    c.parents.forEach((p, k) => {
      const m = mark.get(p);
      if (m === undefined) throw new Error(`listing: parent ${p} of ${c.sha} comes later or is missing`);
      stream += `${k === 0 ? 'from' : 'merge'} :${m}\n`;
    });
    stream += 'deleteall\n';
    if (c.toolchain) stream += `M 100644 inline lean-toolchain\n${data(`${c.toolchain}\n`)}`;
    stream += `M 100644 inline REPL/Main.lean\n${data(fixed.has(c.sha) ? MAIN_AFTER : MAIN_BEFORE)}\n`;
  });
  for (const r of refs) {
    const m = mark.get(r.sha);
    if (m === undefined) throw new Error(`listing: ${r.kind} ${r.name} names an unlisted commit`);
    stream += `reset ${r.kind === 'tag' ? 'refs/tags' : 'refs/heads'}/${r.name}\nfrom :${m}\n\n`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'kimina-repl-fixture-'));
  gitRun(dir, ['init', '--quiet', '--bare']);
  const marks = join(dir, 'marks');
  gitRun(dir, ['fast-import', '--quiet', `--export-marks=${marks}`], stream);
  gitRun(dir, ['update-ref', '-d', 'refs/heads/_generating']);
  gitRun(dir, ['symbolic-ref', 'HEAD', 'refs/heads/master']);
  const generated = new Map<string, string>();
  const real = new Map<string, string>();
  const byMark = new Map<number, string>();
  for (const l of readFileSync(marks, 'utf8').split('\n').filter(Boolean)) {
    const [m, sha] = l.split(' ');
    byMark.set(Number(m.slice(1)), sha);
  }
  for (const c of commits) {
    const g = byMark.get(mark.get(c.sha)!)!;
    generated.set(c.sha, g);
    real.set(g, c.sha);
  }
  writeFileSync(join(dir, 'LISTING'), `generated from ${listing}\n`);
  return { dir, generated, real, flushFix: generated.get(REAL_FLUSH_FIX)! };
}

// TEST DOUBLE of lake for `kimina lean setup` (git is the real one, on a repository rebuilt from the listing
// of the real repl: replFixture.ts). It makes what real lake would, where Lake puts it: the repl binary in
// `.lake/build/bin`, a package's .olean files in `.lake/packages/<pkg>/.lake/build/lib/lean` (Lake's
// PackageConfig `buildDir` .lake/build and `leanLibDir`, leanprover/lean4 src/lake/Lake/Config/PackageConfig.lean).
// `lake` on a user's PATH is elan's proxy, and this double first picks a toolchain as elan does with no default
// toolchain set (leanprover/elan 5905ed8 src/elan/config.rs toolchain_for_dir: ELAN_TOOLCHAIN, else
// find_override_from_dir_walk, the first line of the nearest `lean-toolchain` from the working folder up; else
// the default, and with none ErrorKind::NoDefaultToolchain, 601ce61 src/elan/errors.rs, printed as `error: …`,
// exit 1). Each run is written to `lake.log` (`lake <args>`) and to `lake-runs.log` as
// `<args><TAB><working folder><TAB><toolchain>` (`none` when elan refused). The repl binary it builds is the
// stand-in REPL (backend/demo/stand-in-repl, a TEST DOUBLE of repl's JSON answers); `lake env CMD` runs CMD, as
// lake does after setting Lean's paths. Two knobs, read when it runs: LAKE_DOUBLE_BREAKS_BUILD_ON names a
// toolchain on which building REPL/Main.lean fails with an elaboration error (a repl source that does not
// build on a newer Lean); LAKE_DOUBLE_BREAKS_REPL_ON one on which the built binary builds but answers wrongly
// (dies with Lean's `uncaught exception` on its first command).
export function fakeLake(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const lake = `#!/bin/sh
echo "lake $*" >> "${join(dir, 'lake.log')}"
tc="$ELAN_TOOLCHAIN"
d="$PWD"
while [ -z "$tc" ]; do
  if [ -f "$d/lean-toolchain" ]; then tc=$(head -n 1 "$d/lean-toolchain" | tr -d '[:space:]'); break; fi
  [ "$d" = / ] && break
  d=$(dirname "$d")
done
printf '%s\\t%s\\t%s\\n' "$*" "$PWD" "\${tc:-none}" >> "${join(dir, 'lake-runs.log')}"
if [ -z "$tc" ]; then
  echo 'error: no default toolchain configured. run \`elan default stable\` to install & configure the latest Lean 4 stable release.' >&2
  exit 1
fi
case "$1" in
  --version) echo "Lake version 5.0.0-test (TEST DOUBLE)"; exit 0 ;;
  build)
    echo "[1/2] Building (TEST DOUBLE)"
    if [ -f REPL/Main.lean ]; then
      if [ -n "$LAKE_DOUBLE_BREAKS_BUILD_ON" ] && [ "$tc" = "$LAKE_DOUBLE_BREAKS_BUILD_ON" ]; then
        echo 'error: ./REPL/Main.lean:3:2: unknown constant IO.FS.Stream.flush (TEST DOUBLE)'
        echo "error: build failed"
        exit 1
      fi
      mkdir -p .lake/build/bin
      if [ -n "$LAKE_DOUBLE_BREAKS_REPL_ON" ] && [ "$tc" = "$LAKE_DOUBLE_BREAKS_REPL_ON" ]; then
        printf '#!/bin/sh\\necho "uncaught exception: unknown declaration kimina_smoke (TEST DOUBLE)" >&2\\nexit 1\\n' > .lake/build/bin/repl
      else
        printf '#!/bin/sh\\nexec %s\\n' ${JSON.stringify(standInReplCommand())} > .lake/build/bin/repl
      fi
      chmod +x .lake/build/bin/repl
    else mkdir -p .lake/build/lib/lean && : > .lake/build/lib/lean/Proj.olean; fi ;;
  env)
    shift
    exec "$@" ;;
  exe)
    [ "$2" = cache ] && [ "$3" = get ] || exit 1
    echo "Downloading Mathlib's cache (TEST DOUBLE)"
    mkdir -p .lake/packages/mathlib/.lake/build/lib/lean && : > .lake/packages/mathlib/.lake/build/lib/lean/Mathlib.olean ;;
  *) exit 1 ;;
esac
`;
  writeFileSync(join(bin, 'lake'), lake);
  chmodSync(join(bin, 'lake'), 0o755);
  return bin;
}
