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
  close(): Promise<void>;
}
