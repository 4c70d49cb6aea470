// The agent tools of backend/protocol/agentTools.ts, one handler each, over the project's files, the prove
// service and the job list. Faces (MCP over stdio and HTTP, the editor's language-model tools) only translate:
// arguments arrive checked against the tool's schema, answers leave as the tool's answer type.
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { AgentToolAnswers, AgentToolArgs, AgentToolName } from '../protocol';
import { isInside } from '../store/safePaths';
import {
  checkText,
  committedVersion,
  firstBroken,
  pickTarget,
  sorriesOf,
  spliceNow,
  type AgentChecker,
} from './agentAdapter';
import { AgentToolError, type AgentJobs } from './agentJobs';
import type { CheckAnswer, ProveService } from './service';
import type { AxiomPolicy } from '../lean/verdict';

export { AgentToolError };

export interface AgentToolboxOptions {
  /** The project folders an agent's paths must stay inside; relative paths are read from the first. */
  roots: () => string[];
  /**
   * Lean on a text, for `check` and `sorries` (no model needed); `client` is the caller's fair-sharing key, `file`
   * the absolute path the text comes from (checked in that file's Lean project; absent: a snippet, the default one).
   */
  check: (code: string, client: string, signal?: AbortSignal, file?: string) => Promise<CheckAnswer>;
  /** Lean on the user's own file at `path` (its project's verifier, no filter on its own commands; audited). */
  checkUserFile?: (text: string, path: string, client: string, signal?: AbortSignal) => Promise<CheckAnswer>;
  /** The prove service jobs and `apply` use (loads the model on first use). */
  service: () => Promise<ProveService>;
  jobs: AgentJobs;
  /** The configured axiom allow-list (agents never get native_decide's axioms). */
  allowedAxioms: readonly string[];
  /** The base environment for `git`. */
  childEnv: NodeJS.ProcessEnv;
}

/** Lean files a `sorries` call reads at most (a folder walk stops there and says so). */
const maxSorryFiles = 200;
const skippedFolders = new Set(['.lake', '.git', 'node_modules', 'build', '.elan']);

export type AgentToolHandlers = {
  [N in AgentToolName]: (args: AgentToolArgs<N>, client: string, signal?: AbortSignal) => Promise<AgentToolAnswers[N]>;
};

export function agentToolbox(o: AgentToolboxOptions): AgentToolHandlers {
  const policy: AxiomPolicy = { allowed: o.allowedAxioms, allowNativeDecide: false };
  /** Lean for `client`, in the project of `file` (the absolute path the text comes from) when given. */
  const checker = (client: string, file?: string): AgentChecker => ({
    check: (code, signal) => o.check(code, client, signal, file),
    ...(o.checkUserFile
      ? {
          checkUserFile: (text: string, path: string, signal?: AbortSignal) =>
            o.checkUserFile!(text, path, client, signal),
        }
      : {}),
    policy,
  });

  /**
   * How a path is shown to an agent so that giving it back names the same file: relative to the first project
   * folder (where relative paths are read from) when inside it, else absolute (another folder's file).
   */
  const shownPath = (abs: string): string => {
    const first = o.roots()[0];
    return first !== undefined && (abs === resolve(first) || isInside(first, abs)) ? relative(first, abs) || '.' : abs;
  };
  /** The absolute path of an agent's path, which must name something inside a project folder. */
  const locate = (path: string): { abs: string; shown: string } => {
    const roots = o.roots();
    if (roots.length === 0) throw new AgentToolError('no project folder is open');
    const abs = isAbsolute(path) ? resolve(path) : resolve(roots[0], path);
    const root = roots.find((r) => abs === resolve(r) || isInside(r, abs));
    if (!root) throw new AgentToolError(`${path} is outside the project (${roots.join(', ')})`);
    return { abs, shown: shownPath(abs) };
  };
  const readLean = async (path: string): Promise<{ abs: string; shown: string; text: string }> => {
    const where = locate(path);
    try {
      return { ...where, text: await readFile(where.abs, 'utf8') };
    } catch (err) {
      throw new AgentToolError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };

  const startJob = async (
    kind: 'prove' | 'repair',
    client: string,
    path: string,
    want: { theorem?: string; line?: number },
  ) => {
    const file = await readLean(path);
    let theorem = want.theorem;
    if (kind === 'repair' && theorem === undefined) {
      const broken = await firstBroken(checker(client, file.abs), file.text);
      if (!broken) throw new AgentToolError(`Lean rejects no theorem of ${file.shown}: nothing to repair`);
      theorem = broken;
    }
    const target = pickTarget(file.text, { theorem, line: want.line, repair: kind === 'repair' });
    if (typeof target === 'string') throw new AgentToolError(target);
    // the file is the user's code only as last committed: text an agent wrote since is checked as model text
    const committed = await committedVersion(file.abs, o.childEnv);
    const origin = { file: file.abs, untrustedPrefix: committed.text === null || committed.text !== file.text };
    const job = o.jobs.start(client, kind, file.shown, file.text, target, origin);
    return { jobId: job.id, theorem: target.decl.name };
  };

  return {
    async check(args, client, signal) {
      if (args.code !== undefined)
        return checkText(checker(client), { text: args.code, reference: args.reference, signal });
      const file = await readLean(args.path!);
      const committed = await committedVersion(file.abs, o.childEnv);
      return checkText(checker(client, file.abs), {
        text: file.text,
        path: file.shown,
        absPath: file.abs,
        committed,
        reference: args.reference,
        signal,
      });
    },

    async sorries(args, client, signal) {
      const where = locate(args.path);
      const files: string[] = [];
      const problems: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
          a.name.localeCompare(b.name),
        )) {
          if (files.length >= maxSorryFiles) return;
          const full = join(dir, entry.name);
          if (entry.isDirectory() && !skippedFolders.has(entry.name) && !entry.name.startsWith('.')) await walk(full);
          else if (entry.isFile() && entry.name.endsWith('.lean')) files.push(full);
        }
      };
      let info;
      try {
        info = await stat(where.abs);
      } catch {
        throw new AgentToolError(`${args.path} does not exist`);
      }
      if (info.isDirectory()) await walk(where.abs);
      else files.push(where.abs);
      if (files.length >= maxSorryFiles) problems.push(`only the first ${maxSorryFiles} Lean files were read`);
      const targets = [];
      for (const file of files) {
        const shown = shownPath(file);
        try {
          targets.push(...(await sorriesOf(checker(client, file), shown, await readFile(file, 'utf8'), signal)));
        } catch (err) {
          problems.push(`${shown}: ${(err as Error).message}`);
        }
      }
      return { targets, files: files.length, problems };
    },

    prove: (args, client) => startJob('prove', client, args.path, { theorem: args.theorem, line: args.line }),
    repair: (args, client) => startJob('repair', client, args.path, { theorem: args.theorem }),

    // a client reads, cancels and applies only its own jobs (the editor's Proof view lists all of them apart)
    async job(args, client) {
      return o.jobs.own(args.id, client);
    },

    async cancel(args, client) {
      const job = o.jobs.cancel(args.id, client);
      return { cancelled: job.state === 'cancelled' || job.state === 'running', state: job.state };
    },

    async apply(args, client, signal) {
      const job = o.jobs.own(args.id, client);
      const refuse = (problem: string) => ({ applied: false, path: job.path, problem });
      if (job.state !== 'proved' || !job.proof)
        return refuse(`job ${job.id} is ${job.state}: only a proved job can be applied`);
      if (job.appliedAt) return refuse(`job ${job.id} was already applied at ${job.appliedAt}`);
      // the file the job was started on, by its absolute path (still inside a project folder), never its shown path
      if (!job.file) return refuse(`job ${job.id} does not record its file's absolute path: prove it again`);
      const file = await readLean(job.file);
      const spliced = await spliceNow(await o.service(), file.text, job.proof, signal, { file: file.abs });
      if (!spliced.ok) return refuse(spliced.problem);
      // written only if nobody changed the file while Lean re-checked it; a rename, so no reader sees half a file
      const now = await readFile(file.abs, 'utf8');
      if (now !== file.text) return refuse('the file changed while the proof was being re-checked: apply again');
      const mode = (await stat(file.abs)).mode & 0o777;
      const temp = `${file.abs}.kimina-${process.pid}-${Date.now()}.tmp`;
      await writeFile(temp, spliced.newText, { mode });
      await rename(temp, file.abs);
      o.jobs.markApplied(job.id);
      return { applied: true, path: job.path, declaration: job.proof.declaration };
    },
  };
}
