// The recipe's benchmark, AI-MO/minif2f_test (Kimina's rectified miniF2F test set, 244 problems with informal
// statements; the validation set of kimina_prover_1.7B.sh): download through the Hugging Face datasets server's
// paged `/rows` API (JSON, whatever the repository's file format), store as JSON Lines in our benchmark format,
// and turn into training/validation prompts exactly as the recipe's prepare_data.py does.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import axios from 'axios';
import type { TrainingPrompt } from '../protocol';
import { buildPrompt } from '../prover/prompt';
import { loadBenchmark } from './benchmark';

export const MINIF2F_TEST_REPO = 'AI-MO/minif2f_test';
export const MINIF2F_TEST_ROWS = 244;
/**
 * The Lean the published figures were checked on: kimina-lean-server 2.0.0's default toolchain in August 2025
 * (training-recipe.md §8; the recipe recommends the projectnumina/kimina-lean-server:2.0.0 image).
 */
export const PUBLISHED_LEAN = 'v4.15.0';

/** Where `kimina eval fetch` keeps it in a KIMINA_HOME. */
export function defaultMinif2fTestPath(home: string): string {
  return join(home, 'benchmarks', 'minif2f_test.jsonl');
}

export interface DatasetFetchOptions {
  /** The JSON Lines file to write (defaultMinif2fTestPath). */
  dest: string;
  /** The datasets server (the KIMINA_DATASETS_SERVER setting). */
  endpoint: string;
  token?: string;
  force?: boolean;
  log?: (line: string) => void;
}

export interface DatasetFetchResult {
  path: string;
  rows: number;
  withInformal: number;
  downloaded: boolean;
}

interface RowsPage {
  rows?: { row_idx: number; row: Record<string, unknown> }[];
  num_rows_total?: number;
}

function datasetsServer(o: DatasetFetchOptions): string {
  return o.endpoint.replace(/\/$/, '');
}

/** One JSON Lines row of our benchmark format from a row of AI-MO/minif2f_test (name, informal_prefix, formal_statement). */
function benchmarkRow(row: Record<string, unknown>, where: string): Record<string, string> {
  const text = (k: string): string => {
    const v = row[k];
    if (typeof v !== 'string') throw new Error(`${where}: column '${k}' is missing or not text`);
    return v;
  };
  // informal_problem is kept verbatim: the recipe formats the prompt with the column as it is.
  return {
    name: text('name'),
    split: 'test',
    formal_statement: text('formal_statement'),
    informal_problem: text('informal_prefix'),
  };
}

/** Downloads AI-MO/minif2f_test (split `train` of the dataset = miniF2F test) into `dest` as JSON Lines, and checks it. */
export async function fetchMinif2fTest(o: DatasetFetchOptions): Promise<DatasetFetchResult> {
  const dest = o.dest;
  const log = o.log ?? (() => {});
  if (existsSync(dest) && !o.force) {
    log(`${dest} exists; checking it (pass --force to download again)`);
    return { ...checkMinif2fTest(dest), downloaded: false };
  }
  const base = datasetsServer(o);
  const headers = o.token ? { authorization: `Bearer ${o.token}` } : {};
  const lines: string[] = [];
  for (let offset = 0, total = Infinity; offset < total;) {
    const url = `${base}/rows`;
    let page: RowsPage;
    try {
      page = (
        await axios.get(url, {
          params: { dataset: MINIF2F_TEST_REPO, config: 'default', split: 'train', offset, length: 100 },
          headers,
          timeout: 60_000,
        })
      ).data as RowsPage;
    } catch (e) {
      throw new Error(`download of ${MINIF2F_TEST_REPO} from ${url} failed: ${(e as Error).message}`);
    }
    const rows = page.rows ?? [];
    total = page.num_rows_total ?? 0;
    if (rows.length === 0) break;
    for (const r of rows) lines.push(JSON.stringify(benchmarkRow(r.row, `${MINIF2F_TEST_REPO} row ${r.row_idx}`)));
    offset += rows.length;
    log(`${MINIF2F_TEST_REPO}: ${offset}/${total} rows`);
  }
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest + '.part', lines.join('\n') + '\n');
  const check = checkMinif2fTest(dest + '.part');
  renameSync(dest + '.part', dest);
  return { ...check, path: dest, downloaded: true };
}

/** Every row loads as a benchmark problem; the count and the informal statements are as the recipe expects. */
function checkMinif2fTest(path: string): Omit<DatasetFetchResult, 'downloaded'> {
  const { problems } = loadBenchmark(path);
  if (problems.length !== MINIF2F_TEST_ROWS)
    throw new Error(`${path}: ${problems.length} problems, ${MINIF2F_TEST_REPO} has ${MINIF2F_TEST_ROWS}`);
  const withInformal = problems.filter((p) => (p.informal ?? '').trim() !== '').length;
  return { path, rows: problems.length, withInformal };
}

/** The recipe's validation prompts (prepare_data.py `format_for_verl`): [system, user] from formal_statement and informal_prefix. */
export function minif2fTestPrompts(path: string): TrainingPrompt[] {
  if (!existsSync(path)) {
    throw new Error(
      `${MINIF2F_TEST_REPO} is not downloaded (${path}): run \`kimina eval fetch\`, or validate on your own prompts with --val held-out or --val FILE.jsonl`,
    );
  }
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const r = JSON.parse(line) as Record<string, string>;
      return {
        id: r.name,
        prompt: buildPrompt(r.formal_statement, r.informal_problem ?? ''),
        formalStatement: r.formal_statement,
        source: `${MINIF2F_TEST_REPO} ${r.name}`,
      };
    });
}
