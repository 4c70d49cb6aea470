// What the editor face needs from the backend: proving and checking. Two implementations: the services
// in this process (engine + verifier pool + prove loop), or a running `kimina serve` reached over HTTP.
import type { BackendStatus, CommandResponse, ProveEvent, ProveRequest, ProveResult, Verdict } from '../protocol';

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
  prove(req: ProveRequest, onEvent: (event: ProveEvent) => void, signal: AbortSignal): Promise<ProveResult>;
  check(code: string, signal?: AbortSignal): Promise<CheckAnswer>;
  close(): Promise<void>;
}
