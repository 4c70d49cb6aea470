// The prove loop: prompt -> n samples decoded together -> format check -> extraction -> Lean verdict ->
// (per failed sample) one error-fix turn -> … -> the first verified proof wins and the rest is cancelled.
// Every attempt is stored and streamed as events. Faces (HTTP, LSP, CLI, eval) call `prove`.
import { randomUUID } from 'node:crypto';
import type { Attempt, ChatMessage, InfotreeKind, ProveEvent, ProveRequest, ProveResult, Verdict } from '../protocol';
import type { Engine, Generation } from '../model/engine';
import type { CheckOutcome, LeanVerifier } from '../lean/types';
import type { AttemptStore } from '../store/attempts';
import { type Declaration, formalStatementOf, selectDeclaration } from '../lean/declarations';
import { splitHeader } from '../lean/header';
import { buildPrompt, informalFromDocComment } from './prompt';
import { checkConversation } from './format';
import { extractProof, normalizeStatement } from './extract';
import { buildFeedback } from './feedback';
import { planFixTurn } from './fixTurn';
import { ThinkSplitter, splitThink } from './thinkStream';
import { ProveRequestError, type ProveSettings, settingsOf, DEFAULT_SETTINGS } from './request';

export interface ProveOptions {
  /** Infotree kind asked for when a fix turn may follow (goals in the feedback); null for none. Default 'original'. */
  infotree?: InfotreeKind | null;
  /** Lean time limit per check, in seconds (the verifier's default when absent). */
  verifyTimeout?: number;
  maxFeedbackChars?: number;
  maxPromptTokens?: number;
  /** Defaults for fields the request leaves out. */
  defaults?: ProveSettings;
  seed?: number;
}

export interface ProveDeps {
  engine: Engine;
  verifier: LeanVerifier;
  store?: AttemptStore;
  options?: ProveOptions;
}

export type OnProveEvent = (event: ProveEvent) => void;

/** One sample's conversation waiting for its next answer. */
interface Lane { sample: number; turn: number; conversation: ChatMessage[] }

interface Context {
  id: string;
  deps: ProveDeps;
  settings: ProveSettings;
  statement: string;
  theoremName: string | undefined;
  emit: OnProveEvent;
  signal: AbortSignal;
  tokens: number;
}

/** A controller that aborts when `signal` does; `unlink` removes the listener it left on `signal`. */
function linkedController(signal?: AbortSignal): AbortController & { unlink(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return Object.assign(controller, { unlink: () => signal?.removeEventListener('abort', onAbort) });
}

/** The declaration `prove` works on; throws ProveRequestError saying why there is none. */
export function proveTarget(code: string, theorem?: string): Declaration {
  let decl: Declaration;
  try { decl = selectDeclaration(code, { name: theorem }); }
  catch (err) { throw new ProveRequestError((err as Error).message); }
  if (!decl.body) {
    throw new ProveRequestError(`${decl.kind} ${decl.name || ''} has no ':=' to prove after (pattern-matching proofs are not supported)`.replace('  ', ' '));
  }
  return decl;
}

/** Proves `req` with the engine and verifier in `deps`; resolves with status 'cancelled' when `signal` aborts. */
export async function prove(req: ProveRequest, deps: ProveDeps, onEvent: OnProveEvent = () => {}, signal?: AbortSignal): Promise<ProveResult> {
  const id = req.id ?? randomUUID();
  const settings = settingsOf(req, deps.options?.defaults ?? DEFAULT_SETTINGS);
  const decl = proveTarget(req.code, req.theorem);
  const formal = formalStatementOf(req.code, decl);
  const informal = req.informal ?? informalFromDocComment(formal.informal);
  const prompt = buildPrompt(formal.text, informal);
  const controller = linkedController(signal);
  const theoremName = decl.name ? (decl.namespace ? `${decl.namespace}.${decl.name}` : decl.name) : undefined;
  const ctx: Context = { id, deps, settings, statement: formal.text, theoremName, emit: onEvent, signal: controller.signal, tokens: 0 };

  deps.store?.startRun({ id, theorem: decl.name || '(example)', statement: formal.text, informal,
    engine: deps.engine.name, model: deps.engine.model, settings: { ...settings } });
  onEvent({ type: 'started', id, samples: settings.samples, fixTurns: settings.fixTurns, theorem: decl.name, statement: formal.text });

  const attempts: Attempt[] = [];
  let winner: Attempt | null = null;
  let lanes: Lane[] = Array.from({ length: settings.samples }, (_, sample) => ({ sample, turn: 1, conversation: prompt }));
  try {
    while (lanes.length > 0 && !winner && !ctx.signal.aborted) {
      const round = await runRound(ctx, lanes);
      attempts.push(...round.attempts);
      winner = round.winner;
      lanes = round.next;
    }
  } catch (err) {
    deps.store?.finishRun(id, 'error', null, (err as Error).message);
    onEvent({ type: 'error', id, message: (err as Error).message });
    throw err;
  } finally {
    controller.unlink();
  }
  const status = winner ? 'proved' : ctx.signal.aborted ? 'cancelled' : 'not_proved';
  const proof = winner?.code ?? null;
  const tactics = proof !== null ? proof.slice(normalizeStatement(formal.text).length) : null;
  const result: ProveResult = { id, status, proof, tactics, attempts };
  deps.store?.finishRun(id, status, proof);
  onEvent({ type: 'done', id, result });
  return result;
}

interface RoundResult { attempts: Attempt[]; winner: Attempt | null; next: Lane[] }

/** One batch: generate an answer for every lane, check and verify them, and plan the fix turns. */
async function runRound(ctx: Context, lanes: Lane[]): Promise<RoundResult> {
  const { generations, generateMs } = await generate(ctx, lanes);
  const verifyAbort = linkedController(ctx.signal);
  const won: { attempt: Attempt | null } = { attempt: null };
  const results = await Promise.all(lanes.map(async (lane, k) => {
    const attempt = await judge(ctx, lane, generations[k], generateMs, verifyAbort.signal);
    if (attempt.verdict?.status === 'valid' && !won.attempt) {
      won.attempt = attempt;
      verifyAbort.abort(); // the first verified proof wins: stop the other checks
    }
    return attempt;
  }));
  const winner = won.attempt;
  verifyAbort.unlink();
  const next: Lane[] = [];
  for (const [k, attempt] of results.entries()) {
    const lane = lanes[k];
    if (attempt.verdict?.status === 'valid') attempt.fixSkipped = 'valid';
    else if (attempt.finishReason === 'cancelled' || (attempt.verdict === null && attempt.code !== null) || ctx.signal.aborted) {
      attempt.fixSkipped = 'cancelled';
    } else if (winner) attempt.fixSkipped = 'proved';
    else {
      const plan = await planFixTurn({
        conversation: lane.conversation, response: attempt.response,
        feedback: attempt.code === null ? 'filtered' : (attempt.feedback ?? ''),
        maxFixTurns: ctx.settings.fixTurns, engine: ctx.deps.engine,
        maxFeedbackChars: ctx.deps.options?.maxFeedbackChars, maxPromptTokens: ctx.deps.options?.maxPromptTokens,
      });
      if (plan.ok) next.push({ sample: lane.sample, turn: lane.turn + 1, conversation: plan.conversation });
      else attempt.fixSkipped = plan.reason;
    }
    ctx.deps.store?.recordAttempt(ctx.id, lane.conversation, attempt);
    ctx.emit({ type: 'attempt', id: ctx.id, attempt });
  }
  return { attempts: results, winner, next };
}

/** Generates all lanes together, streaming think/text deltas and progress. */
async function generate(ctx: Context, lanes: Lane[]): Promise<{ generations: Generation[]; generateMs: number }> {
  const splitters = lanes.map(() => new ThinkSplitter());
  const started = Date.now();
  let roundTokens = 0;
  let lastProgress = 0;
  const relay = (k: number, parts: { think: string; text: string }) => {
    const { sample, turn } = lanes[k];
    if (parts.think) ctx.emit({ type: 'think', id: ctx.id, sample, turn, delta: parts.think });
    if (parts.text) ctx.emit({ type: 'text', id: ctx.id, sample, turn, delta: parts.text });
  };
  const progress = (force: boolean) => {
    const now = Date.now();
    if (!force && now - lastProgress < 250) return;
    lastProgress = now;
    const seconds = Math.max(1e-3, (now - started) / 1000);
    ctx.emit({ type: 'progress', id: ctx.id, tokens: ctx.tokens, tokensPerSecond: roundTokens / seconds });
  };
  const maxTokens = await tokenBudget(ctx, lanes);
  const generations = await ctx.deps.engine.generate(lanes.map((l) => l.conversation), {
    maxTokens, temperature: ctx.settings.temperature, topP: ctx.settings.topP,
    seed: ctx.deps.options?.seed, signal: ctx.signal,
  }, (k, delta) => {
    if (k < 0 || k >= lanes.length) return;
    roundTokens++; ctx.tokens++;
    relay(k, splitters[k].push(delta));
    progress(false);
  });
  if (generations.length !== lanes.length) throw new Error(`the engine returned ${generations.length} answers for ${lanes.length} prompts`);
  splitters.forEach((s, k) => relay(k, s.flush()));
  // Engines report exact token counts at the end; the streamed count was one per delta.
  const exact = generations.reduce((n, g) => n + g.tokens, 0);
  ctx.tokens += exact - roundTokens;
  roundTokens = exact;
  progress(true);
  return { generations, generateMs: Date.now() - started };
}

/** The request's maxTokens, cut to what the model's context leaves after the longest prompt. */
async function tokenBudget(ctx: Context, lanes: Lane[]): Promise<number> {
  const limit = ctx.deps.engine.maxContext;
  if (!limit) return ctx.settings.maxTokens;
  let longest = 0;
  for (const lane of lanes) longest = Math.max(longest, await ctx.deps.engine.countPromptTokens(lane.conversation));
  const room = limit - longest;
  if (room <= 0) throw new ProveRequestError(`the prompt (${longest} tokens) does not fit the model's context of ${limit} tokens`);
  return Math.min(ctx.settings.maxTokens, room);
}

/** Format check, extraction and Lean verdict for one answer. */
async function judge(ctx: Context, lane: Lane, gen: Generation, generateMs: number, verifySignal: AbortSignal): Promise<Attempt> {
  const { think } = splitThink(gen.text);
  const format = checkConversation([...lane.conversation, { role: 'assistant', content: gen.text }], ctx.statement);
  const extraction = extractProof(gen.text, ctx.statement);
  const attempt: Attempt = {
    sample: lane.sample, turn: lane.turn, response: gen.text, think,
    code: extraction.ok ? extraction.code : null,
    format: { ok: format.ok, error: format.error, message: format.message },
    verdict: null, tokens: gen.tokens, finishReason: gen.finishReason,
    timings: { generateMs, verifyMs: 0 },
  };
  if (!extraction.ok || gen.finishReason === 'cancelled' || verifySignal.aborted) return attempt;
  const started = Date.now();
  const outcome = await verify(ctx, extraction.code, lane.turn, verifySignal);
  attempt.timings = { generateMs, verifyMs: Date.now() - started };
  if (outcome === null) return attempt; // cancelled: another sample won, or the caller stopped
  attempt.verdict = outcome.verdict;
  ctx.emit({ type: 'verdict', id: ctx.id, sample: lane.sample, turn: lane.turn, verdict: outcome.verdict });
  if (outcome.verdict.status !== 'valid') {
    // The verifier's infotree stays relative to the body after the import header (messages are rebased).
    const infotreeLineOffset = splitHeader(extraction.code).headerLines;
    attempt.feedback = buildFeedback(extraction.code, outcome.verdict, outcome.response, { infotreeLineOffset });
  }
  return attempt;
}

async function verify(ctx: Context, code: string, turn: number, signal: AbortSignal): Promise<CheckOutcome | null> {
  const fixMayFollow = turn <= ctx.settings.fixTurns;
  const infotree = ctx.deps.options?.infotree === undefined ? 'original' : ctx.deps.options.infotree;
  try {
    const outcome = await ctx.deps.verifier.check(code, {
      timeout: ctx.deps.options?.verifyTimeout,
      infotree: fixMayFollow ? infotree : null,
      theorems: ctx.theoremName ? [ctx.theoremName] : undefined,
      signal,
    });
    return signal.aborted && outcome.verdict.status !== 'valid' ? null : outcome;
  } catch (err) {
    if (signal.aborted) return null;
    const verdict: Verdict = { status: 'server_error', reason: `the Lean verifier failed: ${(err as Error).message}`, messages: [], sorries: [], time: 0 };
    return { verdict };
  }
}
