// Recorded real-REPL answers through the REPL client, the pool and the verdict: the Verifier with
// replaying REPLs (a TEST DOUBLE of Lean that answers only recorded commands) in place of Lean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { snippetOf } from '../fixtures/replay-repl/index';
import {
  assertClasses,
  casesOf,
  describeReport,
  knownMismatches,
  knownMismatchKey,
  leanVersions,
  replayVerifier,
} from './replayCases';

interface Pos {
  line: number;
  column: number;
}
interface Msg {
  severity: string;
  pos: Pos;
  endPos?: Pos | null;
  data: string;
}

for (const lean of leanVersions) {
  test(`Verifier over recorded answers of Lean ${lean}: every verdict class matches the recording`, async (t) => {
    const cases = casesOf(lean);
    const logFile = join(mkdtempSync(join(tmpdir(), 'kimina-replay-')), 'replay.log');
    const verifier = replayVerifier(lean, { logFile });
    try {
      const outcomes = await verifier.checkBatch(cases.map(snippetOf));
      const got = new Map(cases.map((r, i) => [r.id, outcomes[i].verdict.status]));
      const report = assertClasses('Verifier', cases, got);
      t.diagnostic(describeReport('Verifier', lean, report));

      const answeredFromRecording = new Set(
        readFileSync(logFile, 'utf8')
          .split('\n')
          .map((l) => /^\d+ recorded:(\S+) /.exec(l)?.[1])
          .filter(Boolean),
      );
      cases.forEach((r, i) => {
        if (knownMismatchKey(r) in knownMismatches) return;
        // refused before Lean (`open Lean.Compiler`: a meta namespace): its class is checked above, no answer to replay
        if (outcomes[i].verdict.reason.startsWith('Rejected before Lean')) return;
        // the body (or, for an import-only snippet, its header) was answered from its own recording
        assert.ok(answeredFromRecording.has(r.id), `${r.id}: the double never replayed this recording`);
        if (r.runsOn === null && r.request.cmd.startsWith('import')) return; // import-only: no body answer to compare
        // Lean's messages reach the caller unchanged, moved down by the header's lines
        const shift = r.runsOn === null ? 0 : r.runsOn.split('\n').length;
        const move = (p: Pos): Pos => ({ line: p.line + shift, column: p.column });
        const recorded = (JSON.parse(r.answer) as { messages?: Msg[] }).messages ?? [];
        const expected = recorded.map((m) => ({
          ...m,
          pos: move(m.pos),
          ...(m.endPos ? { endPos: move(m.endPos) } : {}),
        }));
        assert.deepEqual(outcomes[i].response?.messages ?? [], expected, `${r.id}: messages`);
      });
    } finally {
      await verifier.close();
    }
  });
}
