// Loads a benchmark: a folder of Lean files (miniF2F layout, one theorem per file, split from the
// `Test`/`Valid` folder names) or a JSON Lines file of statements (DeepSeek/AI-MO miniF2F columns).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import type { BenchmarkProblem } from '../protocol';
import { sourceOf } from './sources';
import { firstTheoremName } from './theoremName';

export interface LoadOptions {
  /** Keep only this split (`test`, `valid`), case-insensitive. */
  split?: string | null;
  /** Keep only these problem ids, in this order. */
  only?: string[];
  /** Keep the first N problems (after sorting by id). */
  limit?: number;
}

export interface LoadedBenchmark {
  problems: BenchmarkProblem[];
  /** Lean files without a theorem (e.g. aggregator files that only import), reported but not an error. */
  skipped: string[];
}

/** The header a JSONL statement gets when it carries neither its own imports nor a `header` field. */
export const DEFAULT_HEADER =
  'import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n\n';

export function loadBenchmark(path: string, options: LoadOptions = {}): LoadedBenchmark {
  let info;
  try {
    info = statSync(path);
  } catch {
    throw new Error(`benchmark not found: ${path}`);
  }
  const loaded = info.isDirectory() ? loadFolder(path) : loadJsonl(path);
  return { problems: select(loaded.problems, options, path), skipped: loaded.skipped };
}

function select(all: BenchmarkProblem[], options: LoadOptions, path: string): BenchmarkProblem[] {
  let problems = [...all].sort((a, b) => (a.split ?? '').localeCompare(b.split ?? '') || a.id.localeCompare(b.id));
  if (options.split) {
    const want = options.split.toLowerCase();
    const splits = new Set(problems.map((p) => p.split));
    problems = problems.filter((p) => p.split === want);
    if (problems.length === 0)
      throw new Error(
        `no problems in split '${options.split}' of ${path} (splits: ${[...splits].join(', ') || 'none'})`,
      );
  }
  if (options.only && options.only.length > 0) {
    const byId = new Map(problems.map((p) => [p.id, p]));
    const missing = options.only.filter((id) => !byId.has(id));
    if (missing.length > 0) throw new Error(`not in the benchmark: ${missing.join(', ')}`);
    problems = options.only.map((id) => byId.get(id)!);
  }
  if (options.limit !== undefined) {
    if (!Number.isInteger(options.limit) || options.limit < 1)
      throw new Error(`--limit must be a positive integer, got ${options.limit}`);
    problems = problems.slice(0, options.limit);
  }
  const seen = new Set<string>();
  for (const p of problems) {
    const key = `${p.split ?? ''}/${p.id}`;
    if (seen.has(key)) throw new Error(`duplicate problem id '${p.id}'${p.split ? ` in split ${p.split}` : ''}`);
    seen.add(key);
  }
  if (options.split === undefined || options.split === null) {
    const ids = new Set<string>();
    for (const p of problems) {
      if (ids.has(p.id))
        throw new Error(`problem id '${p.id}' occurs in several splits of ${path}: choose one with --split`);
      ids.add(p.id);
    }
  }
  return problems;
}

function leanFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || name === 'lake-packages' || name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...leanFiles(p));
    else if (name.endsWith('.lean') && name !== 'lakefile.lean') out.push(p);
  }
  return out;
}

const splitNames = new Set(['test', 'valid', 'validation', 'train']);

function splitOf(root: string, file: string): string | null {
  const parts = [basename(root), ...relative(root, file).split(sep).slice(0, -1)];
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i].toLowerCase();
    if (splitNames.has(p)) return p === 'validation' ? 'valid' : p;
  }
  return null;
}

function loadFolder(root: string): LoadedBenchmark {
  const problems: BenchmarkProblem[] = [];
  const skipped: string[] = [];
  for (const file of leanFiles(root)) {
    const code = readFileSync(file, 'utf8');
    const theorem = firstTheoremName(code);
    if (!theorem) {
      skipped.push(file);
      continue;
    }
    problems.push({ id: theorem, split: splitOf(root, file), source: sourceOf(theorem), code, theorem, origin: file });
  }
  if (problems.length === 0) throw new Error(`no Lean theorems found under ${root}`);
  return { problems, skipped };
}

/** Doc-comment or plain informal text, without the `/-- … -/` wrapper. */
function informalText(raw: string): string {
  return raw
    .trim()
    .replace(/^\/-[-!]?\s*/, '')
    .replace(/\s*-\/$/, '')
    .trim();
}

function stringField(
  row: Record<string, unknown>,
  names: string[],
  where: string,
  required: boolean,
): string | undefined {
  for (const n of names) {
    const v = row[n];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new Error(`${where}: field '${n}' must be a string`);
    return v;
  }
  if (required) throw new Error(`${where}: missing field ${names.map((n) => `'${n}'`).join(' or ')}`);
  return undefined;
}

function loadJsonl(path: string): LoadedBenchmark {
  const problems: BenchmarkProblem[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${path}:${i + 1}`;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (e) {
      throw new Error(`${where}: not JSON (${(e as Error).message})`);
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      throw new Error(`${where}: each line must be a JSON object`);
    const r = row as Record<string, unknown>;
    const statement = stringField(r, ['formal_statement', 'statement', 'code'], where, true)!;
    const header = stringField(r, ['header'], where, false);
    const hasImports = /^\s*import\s/m.test(statement);
    const code = header !== undefined ? header + statement : hasImports ? statement : DEFAULT_HEADER + statement;
    const theorem = firstTheoremName(code);
    if (!theorem) throw new Error(`${where}: no theorem or lemma in the statement`);
    const id = stringField(r, ['name', 'id', 'problem_id'], where, false) ?? theorem;
    const split = stringField(r, ['split'], where, false)?.toLowerCase() ?? null;
    // informal_problem (the recipe's column name, written by `kimina eval fetch`) goes into the prompt verbatim,
    // as prepare_data.py does; the other spellings are cleaned of a doc-comment wrapper.
    const verbatim = stringField(r, ['informal_problem'], where, false);
    const informalRaw = stringField(r, ['informal_prefix', 'informal_statement', 'informal', 'problem'], where, false);
    const informal = verbatim ?? (informalRaw ? informalText(informalRaw) : undefined);
    problems.push({ id, split, source: sourceOf(id), code, theorem, origin: where, ...(informal ? { informal } : {}) });
  });
  if (problems.length === 0) throw new Error(`no statements in ${path}`);
  return { problems, skipped: [] };
}
