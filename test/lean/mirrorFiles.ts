// Reads Lean files out of local git clones of public repositories: real code for the lexer and filter tests,
// used where LEAN_GIT_MIRRORS names a folder of clones (`<owner>+<name>/repo`, git directories) and never
// copied into this repository.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The git directory of `owner+name` under LEAN_GIT_MIRRORS, when there is one. */
export function mirrorOf(name: string): string | undefined {
  const root = process.env.LEAN_GIT_MIRRORS;
  const dir = root ? join(root, name, 'repo') : undefined;
  return dir && existsSync(dir) ? dir : undefined;
}

/** Every `.lean` file of a mirror's HEAD under `under`, read in one `git cat-file --batch`. */
export function leanFilesOf(repo: string, under = ''): { path: string; text: string }[] {
  const entries = execFileSync('git', ['-C', repo, 'ls-tree', '-r', 'HEAD', ...(under ? [under] : [])], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  })
    .split('\n')
    .map((l) => /^\d+ blob ([0-9a-f]+)\t(.*\.lean)$/.exec(l))
    .filter((m) => m !== null);
  const out = execFileSync('git', ['-C', repo, 'cat-file', '--batch'], {
    input: entries.map((m) => m[1]).join('\n') + '\n',
    maxBuffer: 1 << 28,
  });
  const files: { path: string; text: string }[] = [];
  let at = 0;
  for (const m of entries) {
    const headerEnd = out.indexOf(10, at);
    const size = Number(out.subarray(at, headerEnd).toString().split(' ')[2]);
    files.push({ path: m[2], text: out.subarray(headerEnd + 1, headerEnd + 1 + size).toString('utf8') });
    at = headerEnd + 1 + size + 1;
  }
  return files;
}
