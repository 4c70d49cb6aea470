// How a proof's samples decode (issue 32): in waves of the engine's scheduled row count (its calibrated cost
// model of the device, or the kimina.rowsAtOnce override), so the first answers end, and Lean judges them, long
// before n answers decoded together would. An engine without a schedule (an OpenAI-compatible server) decodes
// every sample of a round at once, as before.
import type { Engine } from '../model/engine';
import { costWords, expectedFirstProof, settingWords, worstCaseSeconds, type Schedule } from '../model/schedule';
import type { ProveSchedule } from '../protocol';
import type { ProveSettings } from './request';

function minutes(seconds: number): string {
  return seconds < 90 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} min`;
}

/** The schedule of one request: the wave size (never above the samples), its grounds and the cost model's estimates. */
export async function proveSchedule(engine: Engine, settings: ProveSettings): Promise<ProveSchedule> {
  let schedule: Schedule | undefined;
  let failed = '';
  try {
    schedule = await engine.schedule?.();
  } catch (err) {
    failed = `the calibration failed (${(err as Error).message}); `;
  }
  const samples = settings.samples;
  const rows = schedule ? Math.max(1, Math.min(schedule.rows, samples)) : samples;
  const waves = Math.ceil(samples / rows);
  const cost = schedule?.cost;
  const worst = cost
    ? worstCaseSeconds(cost, { rows, samples, maxTokens: settings.maxTokens, turns: 1 + settings.fixTurns })
    : undefined;
  // The schedule's estimate is at its own rows; a request with fewer samples decodes fewer at once.
  const expected =
    cost && schedule && rows !== schedule.rows
      ? expectedFirstProof(cost, rows).expectedSeconds
      : schedule?.expectedFirstProofSeconds;
  const from = !schedule ? 'engine' : schedule.from;
  const grounds =
    from === 'engine'
      ? `${failed}${engine.name} has no calibrated schedule`
      : [
          from === 'setting' && schedule ? settingWords(schedule) : undefined,
          cost ? `calibrated${schedule?.calibratedNow ? ' now' : ''}: ${costWords(cost)}` : undefined,
          expected === undefined ? undefined : `expected first proof about ${minutes(expected)} (recipe's answers)`,
        ]
          .filter(Boolean)
          .join('; ');
  const at =
    rows === samples
      ? `all ${samples} sample${samples === 1 ? '' : 's'} at once`
      : `${rows} of ${samples} samples at once`;
  return {
    engine: engine.name,
    ...(engine.detail ? { engineDetail: engine.detail } : {}),
    samples,
    rows,
    waves,
    from,
    ...(cost ? { calibration: { a: cost.a, m: cost.m, b: cost.b, now: schedule?.calibratedNow === true } } : {}),
    ...(expected === undefined ? {} : { expectedFirstProofSeconds: expected }),
    ...(worst === undefined ? {} : { worstCaseSeconds: worst }),
    text: `${engine.name}: ${at}${waves > 1 ? `, ${waves} waves` : ''} (${grounds})${engine.engineChoice ? `; ${engine.engineChoice}` : ''}`,
  };
}

/** Lanes cut into waves of `rows` (the last one may be shorter); all in one wave when rows is absent. */
export function wavesOf<T>(lanes: T[], rows: number | undefined): T[][] {
  const size = rows && rows >= 1 ? Math.floor(rows) : Math.max(1, lanes.length);
  const out: T[][] = [];
  for (let start = 0; start < lanes.length; start += size) out.push(lanes.slice(start, start + size));
  return out;
}
