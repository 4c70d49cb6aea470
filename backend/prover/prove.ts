// The prove loop: prompt -> n samples decoded in waves of the engine's scheduled rows -> format check -> extraction -> Lean verdict ->
// (per failed sample) one error-fix turn -> … -> the first verified proof wins and the rest is cancelled
// (or, with options.exhaustive, every sample runs to its end). Every attempt is stored and streamed as
// events. Faces (HTTP, LSP, CLI, eval) call `prove`.
import { randomUUID } from 'node:crypto';
import type { Attempt, ChatMessage, ProveEvent, ProveRequest, ProveResult } from '../protocol';
import type { Declaration, FormalStatement } from '../lean/declarations';
import { selectAndState } from '../lean/offThread';
import { buildPrompt, informalFromDocComment } from './prompt';
import { shownStatement } from './statementContext';
import { normalizeStatement } from './extract';
import { ProveRequestError, settingsOf, DEFAULT_SETTINGS } from './request';
import { linkedController, type Lane, type ProveContext, type ProveDeps } from './context';
import { runRound } from './round';
import { qualifiedName } from './trustedName';
import { seedRepair } from './repair';
import { sessionVerifier } from './sessionVerifier';
import { proveSchedule } from './waves';

export type { ProveDeps } from './context';

export type OnProveEvent = (event: ProveEvent) => void;

function checkBody(decl: Declaration): Declaration {
  if (!decl.body) {
    throw new ProveRequestError(
      `${decl.kind} ${decl.name || ''} has no ':=' to prove after (pattern-matching proofs are not supported)`.replace(
        '  ',
        ' ',
      ),
    );
  }
  return decl;
}

let lastPrepared: { code: string; theorem?: string; formal: Promise<FormalStatement> } | undefined;

/**
 * The declaration `prove` works on and its formal statement, read off the event loop for a large request
 * (lean/offThread.ts); rejects with ProveRequestError saying why there is none. The last answer is kept, so
 * the route's up-front check and `prove` read one request once.
 */
export function proveStatement(code: string, theorem?: string): Promise<FormalStatement> {
  if (lastPrepared && lastPrepared.code === code && lastPrepared.theorem === theorem) return lastPrepared.formal;
  const formal = selectAndState(code, theorem).then(
    (f) => {
      checkBody(f.declaration);
      return f;
    },
    (err: Error) => {
      throw new ProveRequestError(err.message);
    },
  );
  lastPrepared = { code, theorem, formal };
  return formal;
}

/** Proves `req` with the engine and verifier in `deps`; resolves with status 'cancelled' when `signal` aborts. */
export async function prove(
  req: ProveRequest,
  deps: ProveDeps,
  onEvent: OnProveEvent = () => {},
  signal?: AbortSignal,
): Promise<ProveResult> {
  const id = req.id ?? randomUUID();
  const settings = settingsOf(req, deps.options?.defaults ?? DEFAULT_SETTINGS);
  const formal = await proveStatement(req.code, req.theorem);
  const decl = formal.declaration;
  const informal = req.informal ?? informalFromDocComment(formal.informal);
  // The model reads what the statement needs, bounded; Lean checks the answer's proof after the real prefix.
  const shown = shownStatement(req.code, decl).text;
  const prompt = buildPrompt(shown, informal);
  if (req.repair && !decl.tactic)
    throw new ProveRequestError(
      `${decl.name || 'the example'} has a term-mode proof; repair works on tactic proofs (\`:= by …\`)`,
    );
  // How many samples decode at once: the engine's schedule (calibrated at first run), or all of them.
  const schedule = await proveSchedule(deps.engine, settings);
  const controller = linkedController(signal);
  const theoremName = qualifiedName(decl);
  // on the user's file: the prefix is elaborated once for all samples and fix turns, each candidate checked on it
  const inSession = deps.openFileSession ? sessionVerifier(deps.openFileSession, formal.text, deps.verifier) : null;
  const ctx: ProveContext = {
    id,
    deps: inSession ? { ...deps, verifier: inSession } : deps,
    settings,
    statement: formal.text,
    theoremName,
    emit: onEvent,
    signal: controller.signal,
    tokens: 0,
    rowsAtOnce: schedule.rows,
  };

  deps.store?.startRun({
    id,
    theorem: decl.name || '(example)',
    statement: formal.text,
    informal,
    engine: deps.engine.name,
    model: deps.engine.model,
    settings: { ...settings, ...(req.repair ? { repair: true } : {}) },
  });
  onEvent({
    type: 'started',
    id,
    samples: settings.samples,
    fixTurns: settings.fixTurns,
    theorem: decl.name,
    statement: formal.text,
    schedule,
  });

  const attempts: Attempt[] = [];
  let winner: Attempt | null = null;
  let lanes: Lane[] = Array.from({ length: settings.samples }, (_, sample) => ({
    sample,
    turn: 1,
    conversation: prompt,
  }));
  let repair: ProveResult['repair'];
  try {
    // A repair: turn 1 is the user's own proof; every round is a fresh batch of samples of the one fix turn
    // (fixTurns + 1 rounds), and no deeper turn follows (the recipe trained one fix turn).
    let repairRounds = 0;
    let seed: ChatMessage[] | null = null;
    if (req.repair) {
      const body = req.code.slice(decl.body!.start.offset, decl.end.offset);
      const seeded = await seedRepair(ctx, prompt, body);
      repair = seeded.info;
      if (seeded.attempt) {
        attempts.push(seeded.attempt);
        deps.store?.recordAttempt(id, prompt, seeded.attempt);
        if (seeded.attempt.verdict)
          onEvent({ type: 'verdict', id, sample: 0, turn: 1, verdict: seeded.attempt.verdict });
        onEvent({ type: 'attempt', id, attempt: seeded.attempt });
      }
      seed = seeded.ok ? seeded.conversation : null;
      repairRounds = seed ? settings.fixTurns + 1 : 0;
      ctx.settings = { ...settings, fixTurns: 1 };
      lanes = [];
    }
    const repairLanes = (): Lane[] =>
      Array.from({ length: settings.samples }, (_, sample) => ({ sample, turn: 2, conversation: seed! }));
    const exhaustive = deps.options?.exhaustive === true;
    for (;;) {
      if (lanes.length === 0 && repairRounds > 0 && !winner && !ctx.signal.aborted) {
        repairRounds--;
        repair!.rounds++;
        lanes = repairLanes();
      }
      if (!(lanes.length > 0 && (!winner || exhaustive) && !ctx.signal.aborted && !ctx.verifierFailure)) break;
      const round = await runRound(ctx, lanes);
      attempts.push(...round.attempts);
      winner ??= round.winner;
      lanes = round.next;
    }
  } catch (err) {
    deps.store?.finishRun(id, 'error', null, (err as Error).message);
    onEvent({ type: 'error', id, message: (err as Error).message });
    throw err;
  } finally {
    controller.unlink();
    await inSession?.close();
  }
  const status = winner ? 'proved' : ctx.signal.aborted ? 'cancelled' : 'not_proved';
  const proof = winner?.code ?? null;
  const tactics = proof !== null ? proof.slice(normalizeStatement(formal.text).length) : null;
  const result: ProveResult = {
    id,
    status,
    proof,
    tactics,
    attempts,
    ...(repair ? { repair } : {}),
    ...(ctx.verifierFailure && !winner ? { verifierFailure: ctx.verifierFailure } : {}),
  };
  deps.store?.finishRun(id, status, proof);
  onEvent({ type: 'done', id, result });
  return result;
}
