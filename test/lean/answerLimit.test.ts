// Issue 29, finding 5: no Lean answer can kill the server. The REPL here is the stand-in (a TEST DOUBLE for
// leanprover-community/repl) with its `stand_in_flood_<MB>` fault: one answer line of that many MiB, the size
// real Lean reaches with many `#help` lines, a full infotree or trace options (argued from Lean's output sizes
// in the issue, not run). The pool, the runner and the verifier are the real ones `kimina serve` uses.
import { test } from 'node:test';
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
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

function verifierWith(answerLimitMb?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-answer-'));
  const launchOptions = {
    command: standInReplCommand(),
    projectDir: dir,
    env: process.env,
    memoryLimitMb: 0,
    ...(answerLimitMb !== undefined ? { answerLimitMb } : {}),
    sandbox: detectSandbox('none', process.env),
  };
  const pool = new ReplPool({
    launch: (scratch) => buildLaunch(launchOptions, scratch),
    maxRepls: 1,
    maxUses: 0,
    maxRssMb: 0,
  });
  const verifier = new Verifier({
    runner: new PoolRunner(pool),
    policy: { allowed: defaultAllowedAxioms, allowNativeDecide: false },
    maxInFlight: 8,
    defaultTimeoutS: 60,
  });
  return { pool, verifier };
}

test(
  'a 600 MB REPL answer is refused past the 64 MiB default, says why, and the next check runs on a new REPL',
  { timeout: 120_000 },
  async () => {
    const { verifier } = verifierWith();
    try {
      const started = Date.now();
      const flood = await verifier.check('theorem big : True := by\n  -- stand_in_flood_600\n  trivial');
      const seconds = (Date.now() - started) / 1000;
      assert.equal(flood.verdict.status, 'server_error', flood.verdict.reason);
      assert.match(flood.verdict.reason, /passed 64 MiB \(KIMINA_REPL_ANSWER_MB\).*replaced/);
      console.log(`600 MB answer refused after ${seconds.toFixed(2)} s`);
      const next = await verifier.check('theorem small : True := trivial');
      assert.equal(next.verdict.status, 'valid', next.verdict.reason);
    } finally {
      await verifier.close();
    }
  },
);

test(
  'the limit is configurable (KIMINA_REPL_ANSWER_MB); an answer under it is read whole, in linear time',
  { timeout: 120_000 },
  async () => {
    const { verifier } = verifierWith(4);
    try {
      const over = await verifier.check('theorem big : True := by\n  -- stand_in_flood_5\n  trivial');
      assert.equal(over.verdict.status, 'server_error');
      assert.match(over.verdict.reason, /passed 4 MiB/);
    } finally {
      await verifier.close();
    }
    const { verifier: roomy } = verifierWith(64);
    try {
      const times: number[] = [];
      for (const mb of [4, 16]) {
        const started = Date.now();
        const out = await roomy.check(`theorem big : True := by\n  -- stand_in_flood_${mb}\n  trivial`);
        times.push((Date.now() - started) / 1000);
        assert.ok(
          out.verdict.messages.some((m) => m.data.length === mb * 1024 * 1024),
          `the ${mb} MiB message came back`,
        );
      }
      console.log(`4 MiB answer: ${times[0].toFixed(2)} s, 16 MiB answer: ${times[1].toFixed(2)} s`);
      // rescanning the unfinished line per 64 KiB chunk is quadratic: 16 MiB took 3.2 s there, 4x the bytes cost 16x
      assert.ok(times[1] < 3, `16 MiB read in ${times[1]} s`);
    } finally {
      await roomy.close();
    }
  },
);
