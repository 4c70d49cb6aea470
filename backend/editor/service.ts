// What the editor face needs from the backend: proving and checking. Two implementations: the services
// in this process (engine + verifier pool + prove loop), or a running `kimina serve` reached over HTTP.
import type {
  BackendStatus,
  CommandResponse,
  ProveEvent,
  ProveOrigin,
  ProveRequest,
  ProveResult,
  Verdict,
} from '../protocol';

export interface CheckAnswer {
  verdict: Verdict;
  response?: CommandResponse;
}

export interface ProveService {
  readonly kind: 'in-process' | 'server';
  /** The attached `kimina serve` (kind 'server'): the language-server face relays training requests to it. */
  readonly server?: { url: string; token?: string };
  /** Engine, model and Lean details for the status bar, and what is still to set up. */
  describe(): Promise<Partial<BackendStatus>>;
  /** `origin`: the user's file the code was taken from (in process: its own project and a file session); absent: a snippet. */
  prove(
    req: ProveRequest,
    onEvent: (event: ProveEvent) => void,
    signal: AbortSignal,
    origin?: ProveOrigin,
  ): Promise<ProveResult>;
  /** `origin.file`: check in that file's Lean project (in process); the code is checked strictly either way. */
  check(code: string, signal?: AbortSignal, origin?: ProveOrigin): Promise<CheckAnswer>;
  /**
   * Checks a snippet cut from the user's file: its first `userLength` characters (ending a line) are the user's own
   * code (elaborated as in their file, never filtered), the rest is model text (filtered, audited), positions the
   * snippet's. `userLength` = the whole snippet: all the user's code. Absent (a `kimina serve`, whose check takes
   * every snippet as untrusted): callers use `check`, strict over the whole snippet.
   */
  checkInFile?(code: string, userLength: number, signal?: AbortSignal, origin?: ProveOrigin): Promise<CheckAnswer>;
  close(): Promise<void>;
}

/**
 * Lean on a snippet cut from the user's file: its first `userLength` characters are the user's code (unfiltered,
 * as in their file), the rest the model's (filtered, audited). A service that cannot tell them apart checks it all
 * strictly.
 */
export function checkInFile(
  service: ProveService,
  origin?: ProveOrigin,
): (code: string, signal?: AbortSignal, userLength?: number) => Promise<CheckAnswer> {
  return (code, signal, userLength = 0) =>
    service.checkInFile ? service.checkInFile(code, userLength, signal, origin) : service.check(code, signal, origin);
}
