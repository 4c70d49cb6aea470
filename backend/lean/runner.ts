// What the verifier needs from whatever runs Lean: the body's answer and the axiom audit's answer.
// Two implementations: the REPL pool (poolRunner.ts) and the zero-setup `lake env lean --json`
// fallback (leanFileRunner.ts). Positions in results are relative to the body (line 1 = first body line).
import type { CommandResponse, InfotreeKind, ReplMessage } from '../protocol';
import type { PoolStats } from './pool';

export interface RunRequest {
  header: string;
  body: string;
  /** Full declaration names to audit with `#print axioms _root_.NAME` on the body's environment. */
  audit: string[];
  /** Examples and anonymous instances: a named copy of the body, run on the header's environment, then audited. */
  auditCopy?: { body: string; names: string[] };
  timeoutMs: number;
  /**
   * The header is a `module` on a Lean release whose `#print axioms` refuses modules (before v4.30): audit on the
   * checked env pickled and unpickled outside module mode (moduleAudit.ts).
   */
  auditOutsideModule?: boolean;
  infotree?: InfotreeKind | null;
  reuse?: boolean;
  signal?: AbortSignal;
}

export type RunResult =
  | {
      kind: 'ok';
      response: CommandResponse;
      /** Per audited name (body's and copy's), the messages Lean gave for its `#print axioms` line. */
      audit: Map<string, ReplMessage[]>;
      /** The audit copy's own errors (any fails the audit). */
      copyErrors?: ReplMessage[];
      /** Messages on the normalised header's lines (lean-file fallback), positions in that header. */
      headerMessages?: ReplMessage[];
      /** Seconds from sending the body to its answer. */
      time: number;
      replId?: string;
      memoryBytes?: number;
    }
  | { kind: 'repl_error'; message: string; time: number; replId?: string }
  | { kind: 'header_error'; response: CommandResponse; replId?: string }
  | { kind: 'timeout'; message: string; replId?: string }
  /** `cannotStart`: Lean (or its REPL) could not be started at all, e.g. not installed (spawn ENOENT). */
  | { kind: 'server_error'; message: string; replId?: string; cannotStart?: boolean };

export interface RunnerStats extends Partial<PoolStats> {
  mode: 'repl' | 'lean-file';
}

export interface SnippetRunner {
  readonly mode: 'repl' | 'lean-file';
  run(request: RunRequest): Promise<RunResult>;
  stats(): RunnerStats;
  close(): Promise<void>;
}

/**
 * The audit command: one `#print axioms _root_.NAME` per line, so answers are matched by line. The
 * `_root_` anchor makes Lean resolve the name from the root, whatever `open`/`namespace` scope the body
 * left behind; the verdict still checks that each answer names the declaration asked for.
 */
export function auditCommand(names: string[]): string {
  return names.map((n) => `#print axioms _root_.${n.replace(/^_root_\./, '')}`).join('\n');
}

/** Groups the audit command's messages by the name on their line (1-based lines of auditCommand). */
export function auditAnswers(names: string[], messages: ReplMessage[], firstLine = 1): Map<string, ReplMessage[]> {
  const out = new Map<string, ReplMessage[]>(names.map((n) => [n, []]));
  for (const m of messages) {
    const name = names[m.pos.line - firstLine];
    if (name !== undefined) out.get(name)?.push(m);
  }
  return out;
}
