// One round of the prove loop: decode the lanes in waves of ctx.rowsAtOnce (all together without a schedule),
// check each answer's format, extract its proof, have Lean judge it (early, as soon as the final block has
// streamed, when allowed; else at its wave's end, while the next wave decodes), stop everything at the first
// verified proof (unless the request is exhaustive: then every wave runs), and plan the fix turns of the failed
// answers. A lane whose wave never started (a proof was verified first) has no attempt.
import type { Attempt, Verdict } from '../protocol';
import type { Generation } from '../model/engine';
import type { CheckOutcome } from '../lean/types';
import { splitHeader } from '../lean/header';
import { linkedController, type Lane, type ProveContext } from './context';
import { checkConversation } from './format';
import { extractProof } from './extract';
import { buildFeedback, goalsAt } from './feedback';
import { planFixTurn } from './fixTurn';
import { generateRound } from './generate';
import { splitThink } from './thinkStream';
import { wavesOf } from './waves';

export interface RoundResult {
  attempts: Attempt[];
  winner: Attempt | null;
  next: Lane[];
}

/** A Lean check of one lane's code; `outcome` is null when it was cancelled. */
interface Check {
  code: string;
  outcome: Promise<CheckOutcome | null>;
  verifyMs: number;
}

async function verify(
  ctx: ProveContext,
  code: string,
  turn: number,
  signal: AbortSignal,
): Promise<CheckOutcome | null> {
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
    const verdict: Verdict = {
      status: 'server_error',
      reason: `the Lean verifier failed: ${(err as Error).message}`,
      messages: [],
      sorries: [],
      time: 0,
    };
    return { verdict };
  }
}

export async function runRound(ctx: ProveContext, lanes: Lane[]): Promise<RoundResult> {
  const stopDecoding = linkedController(ctx.signal);
  const stopChecks = linkedController(ctx.signal);
  const checks = new Map<number, Check>();
  /** Every check started, a lane's superseded early check included (it may still verify, and then it wins). */
  const allChecks: Check[] = [];
  const exhaustive = ctx.deps.options?.exhaustive === true;
  let winnerLane = -1;
  /** The check that verified the winning proof: its code is the proof, whichever of its lane's checks it was. */
  let winnerCheck: Check | undefined;
  const judged = new Set<number>(); // lanes whose verdict was emitted

  const startCheck = (k: number, code: string): Check => {
    const started = Date.now();
    const check: Check = { code, verifyMs: 0, outcome: Promise.resolve(null) };
    check.outcome = verify(ctx, code, lanes[k].turn, stopChecks.signal).then((outcome) => {
      check.verifyMs = Date.now() - started;
      if (outcome) {
        judged.add(k);
        ctx.emit({
          type: 'verdict',
          id: ctx.id,
          sample: lanes[k].sample,
          turn: lanes[k].turn,
          verdict: outcome.verdict,
        });
      }
      if (outcome?.verdict.status === 'server_error' && !ctx.verifierFailure) {
        // Lean itself could not judge the answer (not installed, crashed): no answer can be judged, so stop
        // everything now instead of spending fix turns on a verifier that cannot run.
        ctx.verifierFailure = { reason: outcome.verdict.reason, leanMissing: outcome.verdict.leanMissing === true };
        stopChecks.abort();
        stopDecoding.abort();
      }
      if (outcome?.verdict.status === 'valid' && winnerLane < 0) {
        winnerLane = k;
        winnerCheck = check;
        if (!exhaustive) {
          stopChecks.abort(); // the first verified proof wins: stop the other checks…
          stopDecoding.abort(); // …and the samples still decoding
          // Say so for every lane Lean has not judged, so no row keeps waiting for a verdict.
          lanes.forEach((lane, other) => {
            if (other !== k && !judged.has(other))
              ctx.emit({
                type: 'stopped',
                id: ctx.id,
                sample: lane.sample,
                turn: lane.turn,
                reason: 'proved',
                bySample: lanes[k].sample,
              });
          });
        }
      }
      return outcome;
    });
    checks.set(k, check);
    allChecks.push(check);
    return check;
  };

  const early = ctx.deps.options?.earlyCheck !== false;
  const generations: (Generation | undefined)[] = lanes.map(() => undefined);
  const generateMs: number[] = lanes.map(() => 0);
  /** A finished answer's check: the early one stands when it judged the same code (or won); else one starts now. */
  const checkAtEnd = (k: number, gen: Generation) => {
    const extraction = extractProof(gen.text, ctx.statement);
    const check = checks.get(k);
    if (check && (winnerLane === k || (extraction.ok && check.code === extraction.code))) return;
    if (!extraction.ok || gen.finishReason === 'cancelled' || stopChecks.signal.aborted) {
      checks.delete(k);
      return;
    }
    startCheck(k, extraction.code);
  };
  const waves = wavesOf(
    lanes.map((_, k) => k),
    ctx.rowsAtOnce,
  );
  try {
    for (const [w, wave] of waves.entries()) {
      // A verified proof (unless exhaustive), a cancel or a verifier that cannot run: no further wave starts.
      if (stopDecoding.signal.aborted) break;
      const decoded = await generateRound(
        ctx,
        wave.map((k) => lanes[k]),
        stopDecoding.signal,
        (i, text) => {
          if (!early || (winnerLane >= 0 && !exhaustive) || stopChecks.signal.aborted) return;
          const extraction = extractProof(text, ctx.statement);
          if (extraction.ok) startCheck(wave[i], extraction.code);
        },
        { index: w + 1, of: waves.length, rows: wave.length },
        wave[0], // a seeded request draws new samples in each wave, as all of them at once would
      );
      decoded.generations.forEach((gen, i) => {
        generations[wave[i]] = gen;
        generateMs[wave[i]] = decoded.generateMs;
        checkAtEnd(wave[i], gen); // Lean judges this wave's answers while the next wave decodes
      });
    }
  } catch (err) {
    // A wave that cannot decode ends the request: the earlier waves' Lean checks stop with it.
    stopChecks.abort();
    stopDecoding.abort();
    stopDecoding.unlink();
    stopChecks.unlink();
    throw err;
  }

  // Every check settles before the attempts are written, so a superseded early check that verifies is the winner
  // (its code the proof), never a verdict after the round or a win reported with another block's code.
  await Promise.all(allChecks.map((c) => c.outcome));
  const started = lanes.flatMap((lane, k) => {
    const gen = generations[k];
    return gen ? [{ lane, k, gen }] : [];
  });
  const attempts = await Promise.all(
    started.map(async ({ lane, k, gen }): Promise<Attempt> => {
      // A stopped answer was cut off: checking its format would report the cut as the model's mistake.
      const format =
        gen.finishReason === 'cancelled'
          ? { ok: false, error: 'NONE' as const, stopped: true, message: 'not checked: the answer was stopped' }
          : checkConversation([...lane.conversation, { role: 'assistant', content: gen.text }], ctx.statement);
      const extraction = extractProof(gen.text, ctx.statement);
      const attempt: Attempt = {
        sample: lane.sample,
        turn: lane.turn,
        response: gen.text,
        think: splitThink(gen.text).think,
        code: extraction.ok ? extraction.code : null,
        format: {
          ok: format.ok,
          error: format.error,
          message: format.message,
          ...(format.stopped ? { stopped: true } : {}),
        },
        verdict: null,
        tokens: gen.tokens,
        finishReason: gen.finishReason,
        ...(gen.finishReason === 'length' ? { cut: gen.cut ?? 'the answer reached the token limit (max tokens)' } : {}),
        timings: { generateMs: generateMs[k], verifyMs: 0 },
      };
      // The winner's verified check, else the lane's own (started early or at the wave's end, checkAtEnd).
      const check = winnerLane === k ? winnerCheck : checks.get(k);
      if (!check) return attempt;
      const outcome = await check.outcome;
      attempt.code = check.code;
      attempt.timings = { generateMs: generateMs[k], verifyMs: check.verifyMs };
      if (!outcome) return attempt;
      attempt.verdict = outcome.verdict;
      if (outcome.verdict.status !== 'valid') {
        // The verifier's infotree stays relative to the body after the import header, or to the candidate in a file
        // session (messages are rebased to the snippet's lines).
        const infotreeLineOffset = outcome.infotreeLineOffset ?? splitHeader(check.code).headerLines;
        attempt.feedback = buildFeedback(check.code, outcome.verdict, outcome.response, { infotreeLineOffset });
        const first = outcome.verdict.messages.find((m) => m.severity === 'error');
        const shift = (p: { line: number; column: number }) => ({
          line: p.line - infotreeLineOffset,
          column: p.column,
        });
        const goals =
          first?.endPos && outcome.response?.infotree
            ? goalsAt(outcome.response.infotree, shift(first.pos), shift(first.endPos))
            : null;
        if (first && goals?.length) attempt.errorGoal = { line: first.pos.line, goals };
      }
      return attempt;
    }),
  );
  stopDecoding.unlink();
  stopChecks.unlink();

  const winner = winnerLane >= 0 ? attempts[started.findIndex((x) => x.k === winnerLane)] : null;
  const next: Lane[] = [];
  for (const [i, attempt] of attempts.entries()) {
    const { lane } = started[i];
    if (attempt.verdict?.status === 'valid') attempt.fixSkipped = 'valid';
    else if (ctx.signal.aborted) attempt.fixSkipped = 'cancelled';
    else if (ctx.verifierFailure) attempt.fixSkipped = 'verifier_failed';
    else if (winner && !exhaustive) attempt.fixSkipped = 'proved';
    else if (attempt.finishReason === 'cancelled' || (attempt.verdict === null && attempt.code !== null))
      attempt.fixSkipped = 'cancelled';
    else {
      const plan = await planFixTurn({
        conversation: lane.conversation,
        response: attempt.response,
        feedback: attempt.code === null ? 'filtered' : (attempt.feedback ?? ''),
        maxFixTurns: ctx.settings.fixTurns,
        engine: ctx.deps.engine,
        maxFeedbackChars: ctx.deps.options?.maxFeedbackChars,
        maxPromptTokens: ctx.deps.options?.maxPromptTokens,
      });
      if (plan.ok) next.push({ sample: lane.sample, turn: lane.turn + 1, conversation: plan.conversation });
      else attempt.fixSkipped = plan.reason;
    }
    ctx.deps.store?.recordAttempt(ctx.id, lane.conversation, attempt);
    ctx.emit({ type: 'attempt', id: ctx.id, attempt });
  }
  return { attempts, winner, next };
}
