// The language-server face of repairing: which declarations of a document Lean rejects, and the Repair All
// queue (planned by checking every file, kept in SQLite so that a restart resumes it). The repairs themselves
// run as `kimina/prove` requests with mode `repair` (editor/editorRepair.ts), one at a time, from the client.
import type { Connection } from 'vscode-languageserver/node';
import type { RepairItem, RepairJob } from '../protocol';
import { originOfUri } from '../editor/editorProve';
import { findBroken } from '../editor/editorRepair';
import { recheckProposal } from '../editor/recheck';
import { type ProveService, checkInFile } from '../editor/service';
import type { RepairStore } from '../store/repairs';
import { serveLspRequests } from './lspContract';

export interface RepairRequestsOptions {
  connection: Connection;
  service: () => Promise<ProveService>;
  store?: () => RepairStore;
  log?: (line: string) => void;
}

function need(value: unknown, what: string): asserts value {
  if (value === undefined || value === null || value === '') throw new Error(`${what} is missing`);
}

export function registerRepairRequests({ connection, service, store, log = () => {} }: RepairRequestsOptions): void {
  let opened: RepairStore | undefined;
  const repairs = (): RepairStore => {
    if (!store) throw new Error('this backend keeps no Repair All queue');
    opened ??= store();
    return opened;
  };

  serveLspRequests(connection, {
    brokenDeclarations: async (params, token) => {
      need(params?.uri, 'uri');
      if (typeof params.code !== 'string') throw new Error('code is missing');
      const controller = new AbortController();
      token?.onCancellationRequested(() => controller.abort());
      const svc = await service();
      return findBroken(params, (c, s) => svc.check(c, s, originOfUri(params.uri)), controller.signal);
    },
    recheckProposal: async (params, token) => {
      const controller = new AbortController();
      token?.onCancellationRequested(() => controller.abort());
      const svc = await service();
      // the file's own prefix is the user's code, in the file's own project; the proposal's declaration is checked strictly
      const answer = await recheckProposal(params, checkInFile(svc, originOfUri(params.uri)), controller.signal);
      if (!answer.ok) log(`recheck of ${params.uri} line ${params.declarationLine + 1}: ${answer.problem}`);
      return answer;
    },
    repairPlan: async (params, token) => {
      need(params?.scope, 'scope');
      if (!Array.isArray(params.files)) throw new Error('files is missing');
      const controller = new AbortController();
      token?.onCancellationRequested(() => controller.abort());
      const svc = await service();
      const items: Omit<RepairItem, 'id' | 'status'>[] = [];
      const problems: { uri: string; problem: string }[] = [];
      for (const file of params.files) {
        if (controller.signal.aborted) throw new Error('cancelled');
        const found = await findBroken(file, (c, s) => svc.check(c, s, originOfUri(file.uri)), controller.signal);
        if (found.problem) problems.push({ uri: file.uri, problem: found.problem });
        for (const d of found.declarations) {
          const first = d.errors.find((e) => e.severity === 'error');
          items.push({
            uri: file.uri,
            declaration: d.name,
            line: d.range.start.line,
            error: first ? `line ${first.range.start.line + 1}: ${first.message.split('\n')[0]}` : '',
          });
        }
      }
      const job = repairs().create(params.scope, items);
      log(`repair plan ${job.id}: ${items.length} broken declarations in ${params.files.length} files`);
      return { job, problems };
    },
    repairJobs: () => ({ jobs: repairs().unfinished() }),
    repairUpdate: (params): RepairJob => {
      need(params?.jobId, 'jobId');
      need(params.itemId, 'itemId');
      return repairs().update(params.jobId, params.itemId, params.status, {
        reason: params.reason,
        edit: params.edit,
        replaced: params.replaced,
      });
    },
    repairJob: (params): RepairJob => {
      need(params?.jobId, 'jobId');
      if (params.state === 'done' || params.state === 'cancelled') return repairs().finish(params.jobId, params.state);
      const job = repairs().job(params.jobId);
      if (!job) throw new Error(`no repair job ${params.jobId}`);
      return job;
    },
  });
}
