// The cheat corpus (data/cheatCorpus.ts) through the real Verifier and pool, against the stand-in REPL
// (a test double) speaking both Lean generations: current Lean's texts and v4.15's. None may be valid;
// each gets its expected verdict from the layer the corpus names. A sample also goes through /api/check,
// judged as kimina-client's analyze() (the RL reward) judges it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cheats, knownOpen, type CaughtBy } from './data/cheatCorpus';
import { standInVerifier, type StandInSetup } from './standInVerifier';
import { postJson, startTestServer, type TestServer } from '../api/apiServer';
import { kiminaAnalyze } from '../api/kiminaClientAnalyze';
import type { ReplResponse } from '../../backend/protocol';

const header = 'import Mathlib\n\n';
const reasonOf: Record<CaughtBy, RegExp> = {
  filter: /^Rejected before Lean/,
  plan: /^Rejected before Lean: cannot audit with certainty/,
  warning: /uses sorry|uses 'sorry'/,
  audit: /sorryAx|Could not audit|outside the allow-list|Nothing was audited/,
  lean: /^Lean error/,
};

test('the corpus has at least 40 cheats, unique ids, none expected valid, known-open ids exist', () => {
  assert.ok(cheats.length >= 40, `${cheats.length} cheats`);
  assert.equal(new Set(cheats.map((c) => c.id)).size, cheats.length);
  for (const c of cheats) assert.ok(c.expected.length > 0 && !c.expected.includes('valid'), c.id);
  for (const id of knownOpen)
    assert.ok(
      cheats.some((c) => c.id === id),
      id,
    );
});

for (const lean of ['current', '4.15']) {
  describe(`Lean generation: ${lean}`, () => {
    let s: StandInSetup;
    before(() => {
      s = standInVerifier({ maxRepls: 2, ...(lean === 'current' ? {} : { lean }) });
    });
    after(async () => {
      await s.verifier.close();
    });

    for (const c of cheats) {
      const open = knownOpen.includes(c.id);
      test(
        `${c.class}: ${c.id} -> ${c.expected.join('|')} (${c.caughtBy})`,
        { todo: open ? 'known open: the filter rewrite refuses it' : undefined },
        async () => {
          const out = await s.verifier.check(header + c.code, c.theorems ? { theorems: c.theorems } : {});
          assert.ok(c.expected.includes(out.verdict.status), `${out.verdict.status}: ${out.verdict.reason}`);
          assert.match(out.verdict.reason, reasonOf[c.caughtBy]);
        },
      );
    }

    test('honest controls stay valid (the corpus is not passing by refusing everything)', async () => {
      const controls = [
        'theorem target : (1 : ℕ) = 1 := by\n  simp',
        'section\nvariable (n : ℕ)\nexample : n + 0 = n := by\n  simp\nend',
        'universe u\nexample {α : Sort u} [inst : Inhabited α] : Nonempty α := ⟨inst.default⟩',
        'namespace Foo\ntheorem target : (1 : ℕ) = 1 := rfl\nend Foo\nopen Foo\ntheorem other : (2 : ℕ) = 2 := rfl',
        'instance : Inhabited ℕ := ⟨0⟩\ntheorem target : (1 : ℕ) = 1 := rfl',
      ];
      for (const code of controls) {
        const out = await s.verifier.check(header + code);
        assert.equal(out.verdict.status, 'valid', `${code}\n-> ${out.verdict.reason}`);
      }
    });
  });
}

describe('a sample through /api/check (kimina-lean-server compatible), both generations', () => {
  const sample = cheats.filter((c) =>
    [
      'admit',
      'sorryAx-term',
      'warn-sorry-off-in',
      'guard-msgs-swallows-warning',
      'open-redirect',
      'example-sorryAx-silenced',
      'injected-axiom',
      'native-decide',
      'nothing-declared',
    ].includes(c.id),
  );
  for (const lean of ['current', '4.15']) {
    let srv: TestServer;
    before(async () => {
      srv = await startTestServer({ maxRepls: 2, ...(lean === 'current' ? {} : { lean }) });
    });
    after(async () => {
      await srv.stop();
    });
    test(`${lean}: none is valid for kimina-client's analyze()`, async () => {
      const r = await postJson(`${srv.url}/api/check`, {
        snippets: sample.map((c) => ({ id: c.id, code: header + c.code })),
        timeout: 60,
        debug: false,
        reuse: true,
        infotree: null,
      });
      assert.equal(r.status, 200);
      const results = r.json.results as ReplResponse[];
      for (const res of results) assert.notEqual(kiminaAnalyze(res), 'valid', res.id);
      // a sorry the warning did not show is placed where the declaration stands, not at (1,0)
      const silenced = results.find((x) => x.id === 'warn-sorry-off-in');
      const sorryPos = (silenced?.response as { sorries?: { pos: { line: number } }[] } | undefined)?.sorries?.[0].pos;
      assert.equal(sorryPos?.line, 4);
    });
  }
});
