// What one prove request's rounds share: ids, settings, dependencies, the event sink and the signal.
import type { ChatMessage, InfotreeKind, ProveEvent } from '../protocol';
import type { Engine } from '../model/engine';
import type { LeanVerifier } from '../lean/types';
import type { AttemptStore } from '../store/attempts';
import type { ProveSettings } from './request';
import type { OpenFileSession } from './sessionVerifier';

interface ProveOptions {
  /** Infotree kind asked for when a fix turn may follow (goals in the feedback); null for none. Default 'original'. */
  infotree?: InfotreeKind | null;
  /** Lean time limit per check, in seconds (the verifier's default when absent). */
  verifyTimeout?: number;
  maxFeedbackChars?: number;
  maxPromptTokens?: number;
  /** Defaults for fields the request leaves out. */
  defaults?: ProveSettings;
  seed?: number;
  /**
   * Check an answer as soon as its final `lean4` block has streamed, before the batch ends, so a verified
   * proof stops the other samples' decoding. Default true.
   */
  earlyCheck?: boolean;
  /**
   * Run every sample to its end: a verified proof stops nothing, and every failed answer gets its fix
   * turn(s), so one call with `samples: k` returns all k samples' attempts (evaluation). The result's
   * proof is still the first one verified. Default false: the first verified proof wins.
   */
  exhaustive?: boolean;
}

export interface ProveDeps {
  engine: Engine;
  verifier: LeanVerifier;
  store?: AttemptStore;
  options?: ProveOptions;
  /**
   * The request's code is the user's file (the editor, `kimina prove FILE:LINE`): its prefix is elaborated once in a
   * file session and each candidate checked on it (sessionVerifier.ts). Absent for snippets nobody vouches for.
   */
  openFileSession?: OpenFileSession;
}

/** One sample's conversation waiting for its next answer. */
export interface Lane {
  sample: number;
  turn: number;
  conversation: ChatMessage[];
}

export interface ProveContext {
  id: string;
  deps: ProveDeps;
  settings: ProveSettings;
  /** The trusted formal statement (header + theorem ending in `:= by`). */
  statement: string;
  /** The theorem's full name, for the verifier's axiom audit. */
  theoremName: string | undefined;
  emit: (event: ProveEvent) => void;
  /** Aborted when the caller cancels. */
  signal: AbortSignal;
  /** Tokens generated so far in this request. */
  tokens: number;
  /** The last wave's decoding speed, tokens/s (a new wave's first progress event repeats it). */
  tokensPerSecond?: number;
  /** Samples decoded at once: each round's lanes decode in waves of this many (waves.ts); absent: all at once. */
  rowsAtOnce?: number;
  /** Set when the verifier itself failed (a server_error verdict): the request stops, no fix turn follows. */
  verifierFailure?: { reason: string; leanMissing: boolean };
}

/** A controller that aborts when `signal` does; `unlink` removes the listener it left on `signal`. */
export function linkedController(signal?: AbortSignal): AbortController & { unlink(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return Object.assign(controller, { unlink: () => signal?.removeEventListener('abort', onAbort) });
}
