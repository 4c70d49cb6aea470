// The replay tests' cases: recorded real-REPL answers (test/fixtures/repl-recordings), the verdict
// class each one must get, the known mismatches, and the real pool + verifier over the replaying REPL
// (a TEST DOUBLE for the Lean REPL, test/fixtures/replay-repl).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLaunch } from '../../backend/lean/launch';
import { ReplPool } from '../../backend/lean/pool';
import { PoolRunner } from '../../backend/lean/poolRunner';
import { detectSandbox } from '../../backend/lean/sandbox';
import { defaultAllowedAxioms } from '../../backend/lean/verdict';
import { Verifier } from '../../backend/lean/verifier';
import { loadRecordings, replayReplCommand, type Recording } from '../fixtures/replay-repl/index';
import { declaredNames } from '../fixtures/replay-repl/replay-repl.mjs';

export type ExpectedClass = 'valid' | 'sorry' | 'lean_error' | 'rejected';

interface RecordedMessage {
  severity: string;
  data: string;
}

/**
 * Lean's judgement of one recorded answer, in verdict classes (deliberately not backend/lean/verdict.ts,
 * so the two can disagree):
 * - any message of severity `error` -> lean_error (Lean refused the text; this wins over a sorry);
 * - else any entry in `sorries`, or a warning that the declaration uses sorry, in either spelling
 *   (`declaration uses 'sorry'` before Lean 4.28, ``declaration uses `sorry` `` from 4.28) -> sorry;
 * - else valid (info messages and other warnings do not fail a proof);
 * - except that a command declaring nothing (no named declaration, no `example`, no `instance`) is never
 *   valid: nothing was proved, so nothing could be audited (issue 10) -> rejected. Only with `cmd`.
 */
export function expectedClass(answerText: string, cmd?: string): ExpectedClass {
  const answer = JSON.parse(answerText) as { messages?: RecordedMessage[]; sorries?: unknown[] };
  const messages = answer.messages ?? [];
  if (messages.some((m) => m.severity === 'error')) return 'lean_error';
  const sorryWarning = (m: RecordedMessage): boolean =>
    m.severity === 'warning' &&
    (m.data.includes("declaration uses 'sorry'") || m.data.includes('declaration uses `sorry`'));
  if ((answer.sorries ?? []).length > 0 || messages.some(sorryWarning)) return 'sorry';
  if (cmd !== undefined && declaredNames(cmd).length === 0 && !/\b(example|instance)\b/.test(cmd)) return 'rejected';
  return 'valid';
}

/**
 * KNOWN MISMATCHES: cases (`<path>#<index>`, for every Lean version recorded) whose verdict class does
 * not match today because of a real bug being fixed elsewhere. They are run like every other case and
 * must still mismatch: when a fix makes one match, the tests fail and ask for it to be removed here.
 */
export const knownMismatches: Record<string, string> = {
  // none: the `example` renaming (issue 10, point 3) was the last; examples now reach Lean unchanged
};

export const knownMismatchKey = (r: Recording): string => `${r.path}#${r.index}`;

export const recordings = loadRecordings();
export const leanVersions = recordings.snapshots.map((s) => s.lean);
export const casesOf = (lean: string): Recording[] => recordings.recordings.filter((r) => r.lean === lean);

export interface ClassReport {
  /** expected class -> number of cases */
  counts: Record<string, number>;
  matched: number;
  knownMismatches: number;
}

/**
 * Asserts that every case got its expected class, except the known mismatches, which must still
 * mismatch. `got` maps a case id to the class one pipeline path gave it; `kiminaClient`: judged by
 * kimina-client's analyze(), which reads our `rejected` as `lean_error`.
 */
export function assertClasses(
  path: string,
  cases: Recording[],
  got: Map<string, string>,
  kiminaClient = false,
): ClassReport {
  const wrong: string[] = [];
  const nowMatching: string[] = [];
  const counts: Record<string, number> = {};
  let matched = 0;
  let known = 0;
  for (const r of cases) {
    const ours = expectedClass(r.answer, r.request.cmd);
    // kimina-client's analyze() has no `rejected`: our /api/check adds an error-severity note instead
    const expected = kiminaClient && ours === 'rejected' ? 'lean_error' : ours;
    const actual = got.get(r.id);
    counts[expected] = (counts[expected] ?? 0) + 1;
    if (knownMismatchKey(r) in knownMismatches) {
      known++;
      if (actual === expected) nowMatching.push(r.id);
    } else if (actual !== expected) wrong.push(`${r.id}: expected ${expected}, got ${actual ?? 'nothing'}`);
    else matched++;
  }
  assert.deepEqual(wrong, [], `${path}: verdict classes that differ from the recorded answers`);
  assert.deepEqual(
    nowMatching,
    [],
    `${path}: these known mismatches match now; remove them from knownMismatches in test/lean/replayCases.ts`,
  );
  return { counts, matched, knownMismatches: known };
}

export function describeReport(path: string, lean: string, r: ClassReport): string {
  const counts = Object.entries(r.counts)
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return `${path} on Lean ${lean}: ${r.matched + r.knownMismatches} cases (${counts}); ${r.matched} match, ${r.knownMismatches} known mismatches`;
}

/** The real pool and verifier, with replaying REPLs of one Lean version in place of Lean. */
export function replayVerifier(lean: string, options: { maxRepls?: number; logFile?: string } = {}): Verifier {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-replay-'));
  const launchOptions = {
    command: replayReplCommand(lean, { logFile: options.logFile }),
    projectDir: dir,
    env: process.env,
    memoryLimitMb: 0,
    sandbox: detectSandbox('none', process.env),
  };
  const pool = new ReplPool({
    launch: (scratch) => buildLaunch(launchOptions, scratch),
    maxRepls: options.maxRepls ?? 3,
    maxUses: 0,
    maxRssMb: 0,
  });
  return new Verifier({
    runner: new PoolRunner(pool),
    policy: { allowed: defaultAllowedAxioms, allowNativeDecide: false },
    maxInFlight: 1000,
    defaultTimeoutS: 20,
  });
}
