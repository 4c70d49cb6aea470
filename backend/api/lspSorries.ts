// Prove All Sorries over a project, in the background: `kimina/sorries/start` makes every `sorry` of the files an
// item of a job in the Repair All queue (SQLite, kind `sorries`), and the backend proves the items one after
// another in goal mode (editor/editorProve.ts: the REPL's goal of the sorry, proved as a lemma, spliced and
// re-checked in place). A verified proof is stored as the item's proposal (its edit and the text it replaces) and
// announced with `kimina/sorries/progress`; nothing is written to a file. A job a restart interrupted is resumed
// when the face starts; `kimina/repair/job` with `state: 'cancelled'` stops it (the item in flight is cancelled).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Connection } from 'vscode-languageserver/node';
import type { RepairItem, RepairJob, SorriesProgress } from '../protocol';
import { findDeclarations, offsetAt } from '../editor/leanSource';
import { proveInEditor } from '../editor/editorProve';
import type { ProveService } from '../editor/service';
import type { RepairStore } from '../store/repairs';
import { serveLspRequests } from './lspContract';

export interface SorryRequestsOptions {
  connection: Connection;
  service: () => Promise<ProveService>;
  store?: () => RepairStore;
  notify: (progress: SorriesProgress) => void;
  log?: (line: string) => void;
  /** How often the running item looks whether its job was cancelled, in ms. */
  pollMs?: number;
}

/** The text of a file the job names: the client's copy from the start request, else the file on disk. */
async function textOf(uri: string, given: Map<string, string>): Promise<string | null> {
  const known = given.get(uri);
  if (known !== undefined) return known;
  try {
    return await readFile(fileURLToPath(uri), 'utf8');
  } catch {
    return null;
  }
}

/** One item per sorry of the file: its declaration (any kind, a project's own command too) and its line. */
function sorryItems(uri: string, code: string): Omit<RepairItem, 'id' | 'status'>[] {
  return findDeclarations(code).flatMap((d) =>
    d.sorries.map((s) => ({
      uri,
      declaration: d.name,
      line: s.line,
      error: `sorry at line ${s.line + 1} in ${d.kind === 'custom' ? 'declaration' : d.kind} ${d.name}`,
    })),
  );
}

export function registerSorryRequests({
  connection,
  service,
  store,
  notify,
  log = () => {},
  pollMs = 250,
}: SorryRequestsOptions): { close(): Promise<void> } {
  let opened: RepairStore | undefined;
  const jobs = (): RepairStore => {
    if (!store) throw new Error('this backend keeps no Prove All Sorries queue');
    opened ??= store();
    return opened;
  };
  /** The client's texts per running job (for a job resumed after a restart: none, the files are read). */
  const texts = new Map<string, Map<string, string>>();
  const settings = new Map<string, { samples?: number; fixTurns?: number }>();
  let closed = false;
  let queue: Promise<void> = Promise.resolve();
  let current: AbortController | undefined;

  const stillRunning = (jobId: string) => !closed && jobs().job(jobId)?.state === 'running';

  async function proveItem(job: RepairJob, item: RepairItem): Promise<RepairItem> {
    const text = await textOf(item.uri, texts.get(job.id) ?? new Map());
    const update = (status: 'repaired' | 'broken' | 'skipped', reason: string, extra = {}) =>
      jobs()
        .update(job.id, item.id, status, { reason, ...extra })
        .items.find((i) => i.id === item.id)!;
    if (text === null) return update('skipped', 'the file cannot be read');
    const controller = new AbortController();
    current = controller;
    const watch = setInterval(() => {
      if (!stillRunning(job.id)) controller.abort();
    }, pollMs);
    try {
      const svc = await service();
      const result = await proveInEditor(
        {
          id: `sorries-${job.id}-${item.id}`,
          uri: item.uri,
          code: text,
          mode: 'goal',
          position: { line: item.line, character: 0 },
          ...settings.get(job.id),
        },
        text,
        svc,
        () => {},
        controller.signal,
      );
      if (result.status === 'cancelled' || controller.signal.aborted) return item;
      if (result.declaration && result.declaration.name !== item.declaration)
        return update('skipped', `the file changed: line ${item.line + 1} now holds ${result.declaration.name}`);
      if (result.status === 'proved' && result.edit) {
        const { start, end } = result.edit.range;
        const replaced = text.slice(
          offsetAt(text, start.line, start.character),
          offsetAt(text, end.line, end.character),
        );
        return update('repaired', 'verified in place; waiting at its declaration', { edit: result.edit, replaced });
      }
      const why =
        result.problem ??
        result.attempts.at(-1)?.verdict?.reason ??
        `no verified proof in ${result.attempts.length} answers`;
      return update('broken', why);
    } catch (err) {
      return update('broken', `the proof request failed: ${(err as Error).message}`);
    } finally {
      clearInterval(watch);
      current = undefined;
    }
  }

  async function run(jobId: string): Promise<void> {
    const job = jobs().job(jobId);
    if (!job) return;
    log(`prove all sorries ${job.id}: ${job.items.filter((i) => i.status === 'pending').length} left`);
    for (const item of job.items.filter((i) => i.status === 'pending')) {
      if (!stillRunning(job.id)) break;
      const ended = await proveItem(job, item);
      if (ended.status === 'pending') break; // cancelled in flight: it stays pending
      notify({ job: jobs().job(job.id)!, item: ended });
    }
    if (closed) return;
    const now = jobs().job(job.id)!;
    const finished = now.state === 'running' ? jobs().finish(job.id, 'done') : now;
    texts.delete(job.id);
    settings.delete(job.id);
    log(`prove all sorries ${job.id}: ${finished.state}`);
    notify({ job: finished });
  }

  /** Jobs run one at a time, in the order they were started (or found interrupted). */
  const enqueue = (jobId: string) => {
    queue = queue.then(() => run(jobId)).catch((err: Error) => log(`prove all sorries ${jobId}: ${err.message}`));
  };

  serveLspRequests(connection, {
    sorriesStart: async (params) => {
      const items: Omit<RepairItem, 'id' | 'status'>[] = [];
      const problems: { uri: string; problem: string }[] = [];
      const given = new Map<string, string>();
      for (const file of params.files) {
        const code = file.code ?? (await textOf(file.uri, new Map()));
        if (code === null) {
          problems.push({ uri: file.uri, problem: 'the file cannot be read' });
          continue;
        }
        if (file.code !== undefined) given.set(file.uri, file.code);
        items.push(...sorryItems(file.uri, code));
      }
      const job = jobs().create(params.scope, items, 'sorries');
      texts.set(job.id, given);
      settings.set(job.id, { samples: params.samples, fixTurns: params.fixTurns });
      log(`prove all sorries ${job.id}: ${items.length} sorries in ${params.files.length} files`);
      if (items.length === 0) return { job: jobs().finish(job.id, 'done'), problems };
      enqueue(job.id);
      return { job, problems };
    },
  });

  // A job a restart interrupted goes on (its files are read from disk).
  if (store)
    setImmediate(
      () =>
        !closed &&
        jobs()
          .running('sorries')
          .forEach((j) => enqueue(j.id)),
    );

  return {
    async close() {
      closed = true;
      current?.abort();
      await queue;
    },
  };
}
