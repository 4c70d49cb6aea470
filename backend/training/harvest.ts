// Personal proofs: Lean files of a workspace and the prover's attempt history become training prompts.
// `sorry` declarations are open problems; proven theorems are prompts known to be provable; failed
// first answers with Lean feedback become error-fix samples for the trainer's cache.
import type { Dirent } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { ChatMessage, TrainingPrompt } from '../protocol';
import {
  findDeclarations,
  formalStatementOf,
  PROVABLE_KINDS,
  type Declaration,
  type FormalStatement,
} from '../lean/declarations';
import { promptStatements } from '../lean/offThread';
import { buildPrompt, informalFromDocComment } from '../prover/prompt';
import type { AttemptStore } from '../store/attempts';
import { statementKey } from './promptSet';

export interface HarvestedPrompt extends TrainingPrompt {
  status: 'open' | 'proven';
}

/** A fix prompt seed: [system, user, assistant(failed answer), user(feedback)]. */
export interface FixSeed {
  id: string;
  prompt: ChatMessage[];
  formalStatement: string;
}

export interface Harvest {
  prompts: HarvestedPrompt[];
  fixSeeds: FixSeed[];
  files: number;
  skipped: string[];
  truncated?: string;
}

const SKIP_DIRS = new Set(['.lake', '.git', 'build', 'node_modules', 'lake-packages', '.elan']);
/** Kernel and device file systems: never Lean sources, and walking them can hang or loop. */
const SKIP_ABSOLUTE = new Set(['/proc', '/sys', '/dev', '/run']);

/** How far a workspace walk may go; past any bound it stops and says which in `truncated`. */
export interface WalkLimits {
  /** .lean files collected. */
  files: number;
  /** Folder depth below the workspace. */
  depth: number;
  /** Folder entries looked at (files and folders of every kind). */
  entries: number;
  /**
   * Bytes of Lean source read in total, and per file (a larger file is skipped: each declaration's formal statement
   * re-reads its whole file, so one declaration of a 128 KiB file already holds the event loop for a few hundred ms).
   */
  bytes: number;
  fileBytes: number;
  /** Wall-clock budget in milliseconds. */
  ms: number;
  /** Prompts kept, and their formal statements' characters in all (each carries the file's earlier declarations). */
  prompts: number;
  promptChars: number;
}

const DEFAULT_WALK_LIMITS: WalkLimits = {
  files: 5000,
  depth: 24,
  entries: 200_000,
  bytes: 64 * 1024 * 1024,
  fileBytes: 128 * 1024,
  ms: 20_000,
  prompts: 5000,
  promptChars: 8 * 1024 * 1024,
};

export interface LeanFileList {
  files: string[];
  truncated?: string;
}

/**
 * The workspace's .lean files, walked asynchronously (the server keeps answering), bounded by `limits`. Symlinks are
 * followed only when their target lies inside the workspace (symlinks resolved), and each real folder is walked once.
 */
export async function leanFiles(root: string, limits: Partial<WalkLimits> = {}): Promise<LeanFileList> {
  const l = { ...DEFAULT_WALK_LIMITS, ...limits };
  const deadline = Date.now() + l.ms;
  const realRoot = await realpath(root);
  const seen = new Set<string>([realRoot]);
  const out: string[] = [];
  let entries = 0;
  let truncated: string | undefined;
  const stop = (why: string) => {
    truncated ??= why;
  };
  const stack: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  while (stack.length > 0 && !truncated) {
    const { dir, depth } = stack.pop()!;
    let names: Dirent[];
    try {
      names = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
        a.name < b.name ? 1 : a.name > b.name ? -1 : 0,
      );
    } catch {
      continue;
    }
    const subdirs: { dir: string; depth: number }[] = [];
    for (const entry of names) {
      if (++entries > l.entries) {
        stop(`more than ${l.entries} folder entries`);
        break;
      }
      if (Date.now() > deadline) {
        stop(`took longer than ${Math.round(l.ms / 1000)} s`);
        break;
      }
      const p = join(dir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        // followed only into the workspace itself
        let target: string;
        try {
          target = await realpath(p);
        } catch {
          continue;
        }
        const rel = relative(realRoot, target);
        if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
        try {
          const st = await stat(target);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch {
          continue;
        }
      }
      if (isDir) {
        if (SKIP_DIRS.has(entry.name) || entry.name.startsWith('.') || SKIP_ABSOLUTE.has(p)) continue;
        if (depth + 1 > l.depth) continue;
        let real: string;
        try {
          real = await realpath(p);
        } catch {
          continue;
        }
        if (seen.has(real)) continue;
        seen.add(real);
        subdirs.push({ dir: p, depth: depth + 1 });
      } else if (isFile && entry.name.endsWith('.lean')) {
        out.push(p);
        if (out.length >= l.files) {
          stop(`more than ${l.files} .lean files`);
          break;
        }
      }
    }
    stack.push(...subdirs.reverse()); // names in order, depth first
    await yieldToEventLoop();
  }
  return { files: out.sort(), ...(truncated ? { truncated } : {}) };
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** Prompts from one Lean source: every theorem/lemma (with or without `sorry`), as a standalone formal statement. */
export function promptsFromSource(source: string, label: string): HarvestedPrompt[] {
  return findDeclarations(source)
    .filter(isPromptDeclaration)
    .map((decl) => promptOf(source, label, decl));
}

/**
 * As promptsFromSource, off the event loop: a large file's statements are built in a worker thread
 * (lean/offThread.ts), at most `budgetChars` of them; the prompts are then made one per turn of the loop.
 */
async function promptsFromSourceAsync(
  source: string,
  label: string,
  deadline: number,
  budgetChars: number,
): Promise<HarvestedPrompt[]> {
  const out: HarvestedPrompt[] = [];
  for (const formal of await promptStatements(source, budgetChars)) {
    if (Date.now() > deadline) break;
    out.push(promptOfStatement(label, formal));
    await yieldToEventLoop();
  }
  return out;
}

function isPromptDeclaration(decl: Declaration): boolean {
  return PROVABLE_KINDS.includes(decl.kind) && decl.kind !== 'example' && decl.tactic;
}

function promptOf(source: string, label: string, decl: Declaration): HarvestedPrompt {
  return promptOfStatement(label, formalStatementOf(source, decl));
}

function promptOfStatement(label: string, formal: FormalStatement): HarvestedPrompt {
  const decl = formal.declaration;
  return {
    id: `${label}:${decl.start.line}`,
    prompt: buildPrompt(formal.text, informalFromDocComment(formal.informal)),
    formalStatement: formal.text,
    source: `${label}:${decl.start.line} ${decl.name}`,
    status: decl.sorries.length > 0 ? 'open' : 'proven',
  };
}

/**
 * Prompts from a workspace's Lean files: asynchronous and bounded (see leanFiles); a file over the per-file size, or
 * past the total byte budget, is skipped and listed in `skipped`.
 */
export async function harvestWorkspace(root: string, limits: Partial<WalkLimits> = {}): Promise<Harvest> {
  const l = { ...DEFAULT_WALK_LIMITS, ...limits };
  const deadline = Date.now() + l.ms; // one budget for the walk and the reading
  const prompts: HarvestedPrompt[] = [];
  const skipped: string[] = [];
  const list = await leanFiles(root, l);
  let truncated = list.truncated;
  let bytes = 0;
  let read = 0;
  let chars = 0;
  for (const file of list.files) {
    const label = relative(root, file);
    if (Date.now() > deadline) {
      truncated ??= `took longer than ${Math.round(l.ms / 1000)} s`;
      break;
    }
    if (prompts.length >= l.prompts || chars >= l.promptChars) {
      truncated ??= `more than ${l.prompts} prompts or ${l.promptChars} characters of statements`;
      break;
    }
    try {
      const size = (await stat(file)).size;
      if (size > l.fileBytes) {
        skipped.push(`${label}: ${size} bytes, over the ${l.fileBytes}-byte limit per file`);
        continue;
      }
      if (bytes + size > l.bytes) {
        skipped.push(`${label} and later files: over the ${l.bytes}-byte budget`);
        break;
      }
      bytes += size;
      const found = await promptsFromSourceAsync(await readFile(file, 'utf8'), label, deadline, l.promptChars - chars);
      prompts.push(...found);
      chars += found.reduce((n, p) => n + p.formalStatement.length, 0);
      read++;
    } catch (err) {
      skipped.push(`${label}: ${err instanceof Error ? err.message : String(err)}`);
    }
    await yieldToEventLoop();
  }
  if (truncated) skipped.push(`the walk stopped early: ${truncated}`);
  return {
    prompts: await dedupeAsync(prompts),
    fixSeeds: [],
    files: read,
    skipped,
    ...(truncated ? { truncated } : {}),
  };
}

/** The prover's history: each proved/attempted theorem is a prompt; failed turn-1 answers with feedback are fix seeds. */
export function harvestAttempts(store: AttemptStore, limit = 500): Harvest {
  const prompts: HarvestedPrompt[] = [];
  const fixSeeds: FixSeed[] = [];
  for (const run of store.recentRuns(limit)) {
    prompts.push({
      id: `attempt:${run.id}`,
      prompt: buildPrompt(run.statement, run.informal),
      formalStatement: run.statement,
      source: `attempt ${run.id} ${run.theorem}`,
      status: run.status === 'proved' ? 'proven' : 'open',
    });
    for (const a of store.attemptsOf(run.id)) {
      // The recipe keeps an empty feedback (a sorry-only failure); its size filters run in the trainer, which has the tokenizer.
      if (
        a.turn !== 1 ||
        a.verdict === null ||
        a.verdict.status === 'valid' ||
        a.feedback === null ||
        a.feedback === undefined
      )
        continue;
      fixSeeds.push({
        id: `attempt:${run.id}:${a.sample}`,
        formalStatement: run.statement,
        prompt: [...a.messages, { role: 'assistant', content: a.response }, { role: 'user', content: a.feedback }],
      });
    }
  }
  return { prompts: dedupe(prompts), fixSeeds, files: 0, skipped: [] };
}

/** Keeps the first prompt per statement (whitespace-insensitive). */
/** As dedupe, yielding to the event loop every 64 K characters of statements (a harvest holds megabytes). */
async function dedupeAsync<T extends TrainingPrompt>(prompts: T[]): Promise<T[]> {
  const seen = new Set<string>();
  const out: T[] = [];
  let chars = 0;
  for (const p of prompts) {
    const key = statementKey(p.formalStatement);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(p);
    }
    chars += key.length;
    if (chars >= 64 * 1024) {
      chars = 0;
      await yieldToEventLoop();
    }
  }
  return out;
}

export function dedupe<T extends TrainingPrompt>(prompts: T[]): T[] {
  const seen = new Set<string>();
  return prompts.filter((p) => {
    const key = statementKey(p.formalStatement);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
