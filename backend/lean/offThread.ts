// Large sources are read off the event loop: finding declarations and building formal statements is linear
// (declarations.ts) but a 1 M-character source still takes about a second to lex, so above OFF_THREAD_CHARS
// the work runs in a worker thread (statementWorker.ts; dist/statement-worker.js next to a bundle) and the
// server keeps answering meanwhile. Smaller sources are read in place (a worker's start-up costs more).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  PROVABLE_KINDS,
  findDeclarations,
  formalStatementOf,
  selectDeclaration,
  type FormalStatement,
} from './declarations';

/** Sources up to this many characters are read in place (well under 50 ms of event-loop time). */
export const OFF_THREAD_CHARS = 16_000;

export type StatementJob =
  | { type: 'select'; code: string; theorem?: string }
  /** Every declaration a training prompt is made of (theorem/lemma with a tactic body), up to a character budget. */
  | { type: 'prompts'; code: string; budgetChars: number };
export type StatementReply = { ok: true; statements: FormalStatement[] } | { ok: false; message: string };
/** What the worker posts: statements in batches of about BATCH_CHARS (so no one message takes long to read), then the end. */
export type StatementMessage = { batch: FormalStatement[] } | { end: true; error?: string };
const BATCH_CHARS = 256 * 1024;

/** Runs `job` and posts its statements in batches (the worker's side). */
export function postInBatches(job: StatementJob, post: (m: StatementMessage) => void): void {
  const reply = inPlace(job);
  if (!reply.ok) {
    post({ end: true, error: reply.message });
    return;
  }
  let batch: FormalStatement[] = [];
  let chars = 0;
  for (const statement of reply.statements) {
    batch.push(statement);
    chars += statement.text.length;
    if (chars >= BATCH_CHARS) {
      post({ batch });
      batch = [];
      chars = 0;
    }
  }
  if (batch.length) post({ batch });
  post({ end: true });
}

function workerScript(): string | undefined {
  const candidates = __filename.endsWith('.ts')
    ? [join(__dirname, 'statementWorker.ts')]
    : [join(__dirname, 'statement-worker.js'), join(__dirname, 'statementWorker.js')];
  return candidates.find((p) => existsSync(p));
}

function startWorker(script: string): Worker {
  if (!script.endsWith('.ts')) return new Worker(script);
  // source checkouts (tests under tsx): the worker loads tsx's require hook first; the bundle never comes here
  const hook = require.resolve(['tsx', 'cjs'].join('/'));
  return new Worker(`require(${JSON.stringify(hook)}); require(${JSON.stringify(script)});`, { eval: true });
}

/** The job, on this thread (the worker runs exactly this). */
export function inPlace(job: StatementJob): StatementReply {
  try {
    if (job.type === 'select') {
      const decl = selectDeclaration(job.code, { name: job.theorem });
      return { ok: true, statements: [formalStatementOf(job.code, decl)] };
    }
    const statements: FormalStatement[] = [];
    let chars = 0;
    for (const decl of findDeclarations(job.code)) {
      if (!PROVABLE_KINDS.includes(decl.kind) || decl.kind === 'example' || !decl.tactic) continue;
      if (chars >= job.budgetChars) break;
      const formal = formalStatementOf(job.code, decl);
      chars += formal.text.length;
      statements.push(formal);
    }
    return { ok: true, statements };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/** Runs `job` in a worker thread when the source is large (in place otherwise, or when no worker script ships). */
export async function runStatementJob(job: StatementJob): Promise<StatementReply> {
  const script = job.code.length > OFF_THREAD_CHARS ? workerScript() : undefined;
  if (!script) return inPlace(job);
  const worker = startWorker(script);
  try {
    return await new Promise<StatementReply>((resolve, reject) => {
      const statements: FormalStatement[] = [];
      worker.on('message', (m: StatementMessage) => {
        if ('batch' in m) statements.push(...m.batch);
        else resolve(m.error === undefined ? { ok: true, statements } : { ok: false, message: m.error });
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the statement worker exited (code ${code})`)));
      worker.postMessage(job);
    });
  } finally {
    void worker.terminate();
  }
}

/** The declaration to prove (by name, else the only / first open one) and its formal statement; throws why not. */
export async function selectAndState(code: string, theorem?: string): Promise<FormalStatement> {
  const reply = await runStatementJob({ type: 'select', code, theorem });
  if (!reply.ok) throw new Error(reply.message);
  return reply.statements[0];
}

/** The formal statements of every training-prompt declaration of `code`, up to `budgetChars` in all. */
export async function promptStatements(code: string, budgetChars: number): Promise<FormalStatement[]> {
  const reply = await runStatementJob({ type: 'prompts', code, budgetChars });
  if (!reply.ok) throw new Error(reply.message);
  return reply.statements;
}
