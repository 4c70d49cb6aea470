// A project's `lean-toolchain`, read as Lean's release naming: `leanprover/lean4:v4.9.0`, `v4.33.0-rc2`,
// milestones `v4.0.0-m6`, nightlies `leanprover/lean4:nightly-2025-01-01` or `leanprover/lean4-nightly:nightly-…`,
// PR builds `leanprover/lean4-pr-releases:pr-release-1234`, and elan's channels (`stable`, `nightly`).
// Only a release tag names a leanprover-community/repl tag (and a folder under KIMINA_HOME/repl): anything
// else, above all text with `/` or `..`, never reaches a path or a git command.

/** A Lean release tag: `v4.9.0`, `v4.33.0-rc2`, `v4.0.0-m6`. */
export const RELEASE_TAG = /^v\d{1,3}\.\d{1,3}\.\d{1,3}(?:-(?:rc|m)\d{1,3})?$/;

export type Toolchain =
  | { kind: 'release'; tag: string }
  | { kind: 'nightly' | 'pr-release' | 'channel'; name: string }
  | { kind: 'invalid'; text: string };

const ORIGINS = new Set(['leanprover/lean4', 'leanprover/lean4-nightly', 'leanprover/lean4-pr-releases']);

/** Parses the contents of a `lean-toolchain` file. */
export function parseToolchain(fileText: string): Toolchain {
  const text = fileText.trim();
  const colon = text.lastIndexOf(':');
  const origin = colon >= 0 ? text.slice(0, colon) : '';
  const name = colon >= 0 ? text.slice(colon + 1) : text;
  if (colon >= 0 && !ORIGINS.has(origin)) return { kind: 'invalid', text };
  if (RELEASE_TAG.test(name) && origin !== 'leanprover/lean4-nightly' && origin !== 'leanprover/lean4-pr-releases')
    return { kind: 'release', tag: name };
  if (/^nightly-\d{4}-\d{2}-\d{2}(?:-rev\d{1,3})?$/.test(name) && origin !== 'leanprover/lean4-pr-releases')
    return { kind: 'nightly', name };
  if (/^pr-release-\d{1,7}$/.test(name) && origin === 'leanprover/lean4-pr-releases')
    return { kind: 'pr-release', name };
  if (colon < 0 && ['stable', 'beta', 'nightly'].includes(name)) return { kind: 'channel', name };
  return { kind: 'invalid', text };
}

/** The release tag of a toolchain text, or undefined when it is not a plain Lean release. */
export function releaseTag(fileText: string): string | undefined {
  const t = parseToolchain(fileText);
  return t.kind === 'release' ? t.tag : undefined;
}

/** Why `kimina lean setup` cannot build a REPL for this toolchain (one sentence for people). */
export function unsupportedToolchainReason(fileText: string): string {
  const t = parseToolchain(fileText);
  const shown = JSON.stringify(fileText.trim().slice(0, 120));
  switch (t.kind) {
    case 'release':
      return '';
    case 'nightly':
    case 'pr-release':
    case 'channel':
      return `the toolchain ${shown} is not a Lean release, and leanprover-community/repl has tags for releases only (like leanprover/lean4:v4.24.0): build the REPL yourself and set KIMINA_REPL_PATH`;
    case 'invalid':
      return `the toolchain ${shown} is not a Lean toolchain name (expected like leanprover/lean4:v4.24.0)`;
  }
}

/** Orders release tags as Lean numbers them: v4.9.0 < v4.10.0-rc1 < v4.10.0-rc2 < v4.10.0 (milestones before rcs). */
export function compareReleaseTags(a: string, b: string): number {
  const key = (tag: string): number[] => {
    const m = /^v(\d+)\.(\d+)\.(\d+)(?:-(rc|m)(\d+))?$/.exec(tag);
    if (!m) throw new Error(`not a Lean release tag: ${JSON.stringify(tag)}`);
    const pre = m[4] === undefined ? [2, 0] : [m[4] === 'm' ? 0 : 1, Number(m[5])];
    return [Number(m[1]), Number(m[2]), Number(m[3]), ...pre];
  };
  const ka = key(a);
  const kb = key(b);
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
  return 0;
}
