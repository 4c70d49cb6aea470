// Which leanprover-community/repl revision builds against a project's Lean release, and whether it still
// needs the flush fix. Read from a full clone (all branches and tags, fetched as `origin/*`), never from
// version numbers: repl tags some releases, leaves others on `bump_to_<release>` branches or untagged
// master commits, and has no revision at all for a few (v4.12.0, v4.13.0). docs/verifier.md has the table.
import { execFile } from 'node:child_process';
import { compareReleaseTags, releaseTag } from './toolchain';

/**
 * The flush fix: repl commit 4fc1e6d ("avoid buffering stdout to ensure immediate replies (#49)",
 * 2024-07-26), which flushes stdout after every answer. Without it a REPL talking to a pipe holds its
 * answer in the buffer and every check waits for the timeout. Whether a revision has it is decided by
 * ancestry (`git merge-base --is-ancestor`): v4.10.0-rc1 lacks it although v4.9.0's successor tags have it.
 */
export const FLUSH_FIX_COMMIT = '4fc1e6d1dda170e8f0a6b698dd5f7e17a9cf52b4';

export type ReplRevision =
  | { how: 'tag' | 'branch' | 'master' | 'history'; ref: string; commit: string }
  | { how: 'none'; nearest?: { tag: string; ref: string; commit: string } };

/** A clone of repl: its folder, and the base environment git runs with (handed down by the root). */
export interface ReplClone {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** Runs git in the clone; rejects with git's last stderr line. */
export function git(repo: ReplClone, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: repo.dir, maxBuffer: 64 * 1024 * 1024, env: { ...repo.env, GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`git ${args[0]}: ${String(stderr).trim().split('\n').slice(-1)[0] || err.message}`));
        else resolve(String(stdout));
      },
    );
  });
}

async function gitOk(repo: ReplClone, args: string[]): Promise<boolean> {
  return git(repo, args).then(
    () => true,
    () => false,
  );
}

/** The release tag named by `rev:lean-toolchain`, or undefined (no file, not a release). */
async function toolchainAt(repo: ReplClone, rev: string): Promise<string | undefined> {
  return git(repo, ['show', `${rev}:lean-toolchain`]).then(releaseTag, () => undefined);
}

async function commitOf(repo: ReplClone, ref: string): Promise<string> {
  return (await git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
}

/** The branches of the clone (`origin/<name>` -> name), without `origin/HEAD`. */
async function branches(repo: ReplClone): Promise<string[]> {
  const out = await git(repo, ['for-each-ref', '--format=%(refname:strip=3)', 'refs/remotes/origin']);
  return out.split('\n').filter((b) => b && b !== 'HEAD');
}

/** The default branch of the clone (`origin/HEAD`, else master). */
async function defaultBranch(repo: ReplClone): Promise<string> {
  const head = await git(repo, ['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD']).catch(() => '');
  return head.trim().replace(/^origin\//, '') || 'master';
}

/** The branch names tried for a release, most specific first; then any other name ending in `_<tag>` or `/<tag>`. */
function branchRank(name: string, tag: string): number {
  const exact = [`bump_to_${tag}`, `bump_toolchain_to_${tag}`, `bump/${tag}`, `releases/${tag}`];
  const i = exact.indexOf(name);
  if (i >= 0) return i;
  return name.endsWith(`_${tag}`) || name.endsWith(`/${tag}`) || name.endsWith(`-${tag}`) ? exact.length : -1;
}

/**
 * Commits of the default branch's first-parent line where lean-toolchain changed, newest first, with the
 * release each names (undefined for nightlies and the like).
 */
async function toolchainChanges(repo: ReplClone, branch: string): Promise<Array<{ commit: string; tag?: string }>> {
  const out = await git(repo, ['log', '--first-parent', '--format=%H', `origin/${branch}`, '--', 'lean-toolchain']);
  const commits = out.split('\n').filter(Boolean);
  return Promise.all(commits.map(async (commit) => ({ commit, tag: await toolchainAt(repo, commit) })));
}

/**
 * The repl revision for `tag`: the tag itself; else a branch for it (`bump_to_<tag>`…); else the newest
 * commit of the default branch whose lean-toolchain names it; else the newest commit on any branch that set
 * lean-toolchain to it. Each candidate's own lean-toolchain must name exactly `tag` (a `bump_to_v4.20.0-rc2`
 * branch that moved on to v4.20.1-rc1 does not count). With none, `nearest` is the newest revision for an
 * older release (what a user may try to build by hand).
 */
export async function resolveReplRevision(repo: ReplClone, tag: string): Promise<ReplRevision> {
  if (
    (await gitOk(repo, ['rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`])) &&
    (await toolchainAt(repo, `refs/tags/${tag}`)) === tag
  )
    return { how: 'tag', ref: tag, commit: await commitOf(repo, `refs/tags/${tag}`) };
  const all = await branches(repo);
  const candidates = all
    .map((name) => ({ name, rank: branchRank(name, tag) }))
    .filter((c) => c.rank >= 0)
    .sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name));
  for (const c of candidates)
    if ((await toolchainAt(repo, `origin/${c.name}`)) === tag)
      return { how: 'branch', ref: c.name, commit: await commitOf(repo, `origin/${c.name}`) };
  const main = await defaultBranch(repo);
  const changes = await toolchainChanges(repo, main);
  const i = changes.findIndex((c) => c.tag === tag);
  if (i >= 0) {
    // The newest commit still on that toolchain: the first parent of the next change (or the branch's tip).
    const rev = i === 0 ? `origin/${main}` : `${changes[i - 1].commit}^1`;
    if ((await toolchainAt(repo, rev)) === tag) return { how: 'master', ref: main, commit: await commitOf(repo, rev) };
    return { how: 'master', ref: main, commit: changes[i].commit };
  }
  const history = await git(repo, ['log', '--remotes=origin', '--format=%H', '--', 'lean-toolchain']);
  for (const commit of history.split('\n').filter(Boolean))
    if ((await toolchainAt(repo, commit)) === tag) return { how: 'history', ref: commit.slice(0, 12), commit };
  // Nothing for this release: the newest older release on the default branch, for the documented answer.
  const older = changes
    .filter((c): c is { commit: string; tag: string } => c.tag !== undefined && compareReleaseTags(c.tag, tag) < 0)
    .sort((a, b) => compareReleaseTags(b.tag, a.tag))[0];
  if (!older) return { how: 'none' };
  const idx = changes.indexOf(older);
  const rev = idx === 0 ? `origin/${main}` : `${changes[idx - 1].commit}^1`;
  const commit = (await toolchainAt(repo, rev)) === older.tag ? await commitOf(repo, rev) : older.commit;
  return { how: 'none', nearest: { tag: older.tag, ref: main, commit } };
}

/**
 * Whether `commit` lacks the flush fix, by ancestry. A shallow clone is deepened first, and the fix commit
 * must be in the clone (fetched from `origin` when it is not): without either the answer would be a guess,
 * so this throws.
 */
export async function lacksFlushFix(repo: ReplClone, commit: string, fix = FLUSH_FIX_COMMIT): Promise<boolean> {
  // A shallow clone cuts the history that ancestry is read from: deepen it first (or fail below).
  if ((await git(repo, ['rev-parse', '--is-shallow-repository']).catch(() => 'false')).trim() === 'true')
    await git(repo, ['fetch', '--quiet', '--unshallow', 'origin']).catch(() => '');
  if ((await git(repo, ['rev-parse', '--is-shallow-repository']).catch(() => 'false')).trim() === 'true')
    throw new Error(
      `the repl clone in ${repo.dir} is shallow and could not be deepened, so whether ${commit.slice(0, 12)} has the flush fix cannot be decided by ancestry`,
    );
  if (!(await gitOk(repo, ['cat-file', '-e', `${fix}^{commit}`])))
    await git(repo, ['fetch', '--quiet', 'origin', fix]).catch(() => '');
  if (!(await gitOk(repo, ['cat-file', '-e', `${fix}^{commit}`])))
    throw new Error(
      `the repl clone has no commit ${fix.slice(0, 7)} (the flush fix), so whether ${commit.slice(0, 12)} needs it cannot be decided; clone the full repository (KIMINA_REPL_GIT_URL) or set KIMINA_REPL_FLUSH_FIX to that fix's commit in your mirror`,
    );
  return !(await gitOk(repo, ['merge-base', '--is-ancestor', fix, commit]));
}

/** Applies the flush fix to the checked-out tree (no commit); throws when it does not apply cleanly. */
export async function applyFlushFix(repo: ReplClone, fix = FLUSH_FIX_COMMIT): Promise<void> {
  try {
    await git(repo, ['-c', 'user.name=kimina', '-c', 'user.email=kimina@localhost', 'cherry-pick', '--no-commit', fix]);
  } catch (err) {
    await gitOk(repo, ['cherry-pick', '--abort']);
    throw new Error(`the flush fix ${fix.slice(0, 7)} does not apply to this repl revision: ${(err as Error).message}`);
  }
}
