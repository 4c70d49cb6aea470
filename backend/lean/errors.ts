// Typed failures of the verifier, so each layer can map them (the HTTP layer: 429, per-snippet errors).

/** The verifier's queue is full: try again after `retryAfterS` seconds (HTTP 429 + Retry-After). */
export class QueueFull extends Error {
  constructor(readonly retryAfterS: number) {
    super('No available REPLs');
    this.name = 'QueueFull';
  }
}

/** A request with more snippets than one request may carry (HTTP 413: retrying would not help). */
export class BatchTooLarge extends Error {
  constructor(
    readonly count: number,
    readonly max: number,
  ) {
    super(`Too many snippets in one request: ${count}, the limit is ${max}; send them in several requests`);
    this.name = 'BatchTooLarge';
  }
}

/**
 * `memory`: the memory guard stopped the process while it checked (its tree held more than the limit).
 * `too-large`: its answer passed the byte limit (KIMINA_REPL_ANSWER_MB) and the process was stopped.
 */
export type ReplFailureKind = 'timeout' | 'exited' | 'garbage' | 'spawn' | 'closed' | 'memory' | 'too-large';

/** One REPL process failed while answering a command; the process is gone or must be killed. */
export class ReplFailure extends Error {
  constructor(
    readonly kind: ReplFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ReplFailure';
  }
}

/**
 * Why Lean (or its REPL) never started, in words a user can act on: the program that was not found or could not
 * be run, by its name only. The sandbox wrapper (bwrap, unshare), the memory cap and the scratch folder the
 * command ran with are ours, not the user's, so they are left out ("unshare: failed to execute lake: …" becomes
 * "Lean could not be started: `lake` was not found").
 */
export function leanNotStarted(what: 'Lean' | 'the Lean REPL', program: string, detail: string): string {
  const name = program.split(/[\\/]/).pop() || program;
  const denied = /EACCES|Permission denied|code 126\b|not executable/i.test(detail);
  const start = what === 'Lean' ? 'Lean' : 'The Lean REPL';
  return (
    `${start} could not be started: \`${name}\` ${denied ? 'could not be run (permission denied)' : 'was not found'}. ` +
    'Install Lean with elan: https://github.com/leanprover/elan'
  );
}
