// A clone stands alone: nothing in the repository reads a folder beside it (the development machine has a
// `shared` folder next to the checkout; a user's clone has nothing there), and the data the tests read is
// carried inside it (data/minif2f-lean4 with its licence, 488 problem files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { BUILTIN_MINIF2F_FILES, builtinMinif2fDir, resolveBenchmarkArg } from '../backend/eval/builtin';
import { loadBenchmark } from '../backend/eval/benchmark';

const root = resolve(__dirname, '..');
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'out', '.e2e', '.venv', '.venv-verl', 'test-output']);
const SKIP_EXT = /\.(onnx|onnx_data|bin|safetensors|png|jpg|jpeg|gif|ico|vsix|gz|tgz|zip|node|so|dylib|dll|exe|wasm)$/i;

// Built from pieces so that this file does not match itself.
const up = '\\.\\.';
const word = 'sha' + 'red';
const q = `['"\`]`;
/** The relative path up to the folder beside the checkout (either slash), path.join / os.path.join pieces, and its absolute path. */
const PATTERNS = [
  new RegExp(`${up}[/\\\\]+${word}\\b`),
  new RegExp(`${q}${up}${q}\\s*,\\s*${q}${word}${q}`),
  new RegExp(`/work/${word}\\b`),
];

/** The lines of a text that reach a folder beside the repository. */
export function readsBeside(text: string): string[] {
  return text.split('\n').filter((line) => PATTERNS.some((p) => p.test(line)));
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (SKIP_DIRS.has(name)) continue;
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) out.push(...files(p));
    else if (st.isFile() && !SKIP_EXT.test(name) && st.size < 4 << 20) out.push(p);
  }
  return out;
}

test('the detector finds each way of reaching the folder beside the repository, and not look-alikes', () => {
  const dots = '..';
  assert.equal(readsBeside(`x = '${dots}/${word}/data/minif2f-lean4'`).length, 1);
  assert.equal(readsBeside(`join(root, '${dots}', '${word}', 'data')`).length, 1);
  assert.equal(readsBeside(`os.path.join(here, "${dots}", "${dots}", "${word}", "data")`).length, 1);
  assert.equal(readsBeside(`cat ${dots}\\${word}\\x`).length, 1);
  assert.equal(readsBeside(`ls /work/${word}/reference`).length, 1);
  assert.deepEqual(readsBeside('a shared REPL pool; backend/shared.ts; ../sharedState'), []);
});

test('no file in the repository reads the folder beside the checkout (a clone has nothing beside it)', () => {
  const all = files(root);
  assert.ok(all.length > 300, `only ${all.length} files scanned`);
  const hits: string[] = [];
  for (const f of all) {
    const text = readFileSync(f, 'utf8');
    for (const line of readsBeside(text)) hits.push(`${relative(root, f)}: ${line.trim().slice(0, 160)}`);
  }
  assert.deepEqual(hits, []);
});

test('the repository carries miniF2F-lean4 with its licence: 488 files, offered as the built-in benchmark', () => {
  const dir = join(root, 'data', 'minif2f-lean4');
  assert.equal(builtinMinif2fDir(), dir);
  assert.match(readFileSync(join(dir, 'LICENSE'), 'utf8'), /^MIT License/);
  assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /miniF2F-lean4/);
  assert.equal(readFileSync(join(dir, 'lean-toolchain'), 'utf8').trim(), 'leanprover/lean4:v4.24.0');
  let n = 0;
  for (const [split, count] of Object.entries(BUILTIN_MINIF2F_FILES)) {
    const lean = readdirSync(join(dir, 'MiniF2F', split)).filter((f) => f.endsWith('.lean'));
    assert.equal(lean.length, count, split);
    n += lean.length;
  }
  assert.equal(n, 488);
  assert.equal(loadBenchmark(resolveBenchmarkArg('minif2f-lean4')).problems.length, 488);
  assert.equal(resolveBenchmarkArg('builtin:minif2f-lean4'), dir);
  assert.throws(() => resolveBenchmarkArg('builtin:putnam'), /no built-in benchmark 'putnam'/);
  assert.ok(!existsSync(join(root, 'minif2f-lean4')));
});
