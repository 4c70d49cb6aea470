// Issue 29, finding 4: `kimina repair --apply` writes only over what it read. The repairs here are edits as the
// splice rule builds them (ranges in the text read at the start); the file is changed "meanwhile" by the test,
// as a user typing in the editor would, and nothing the user typed may be lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyRepairs, type PlannedRepair } from '../../backend/cli/repairApply';
import { findDeclarations, offsetAt, positionAt } from '../../backend/editor/leanSource';
import { BROKEN_FILE } from '../editor/repairDoubles';

/** The repair of `name` in `text`: its `div_le_iff hc` replaced by `div_le_iff₀ hc`, as an LSP edit. */
function repairOf(text: string, name: string): PlannedRepair {
  const decl = findDeclarations(text).find((d) => d.name === name)!;
  const from = text.indexOf('div_le_iff hc', decl.start);
  const edit = {
    range: { start: positionAt(text, from), end: positionAt(text, from + 'div_le_iff hc'.length) },
    newText: 'div_le_iff₀ hc',
  };
  return { declaration: name, edit, span: { start: decl.start, end: decl.end } };
}

function inTemp(contents: string | Buffer, run: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-apply-'));
  try {
    const file = join(dir, 'Ratios.lean');
    writeFileSync(file, contents);
    run(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const repairs = [repairOf(BROKEN_FILE, 'ratio_one'), repairOf(BROKEN_FILE, 'ratio_two')];

test('lines typed above and in another declaration meanwhile are kept; the repairs go where their declarations now stand', () => {
  inTemp(BROKEN_FILE, (file) => {
    const typed = BROKEN_FILE.replace(
      'import Mathlib\n',
      'import Mathlib\n\n-- my notes\ntheorem mine : True := trivial\n',
    ).replace('  linarith\n', '  linarith -- typed\n');
    writeFileSync(file, typed);
    const out = applyRepairs(file, BROKEN_FILE, repairs);
    assert.deepEqual(out.applied, ['ratio_one', 'ratio_two']);
    const written = readFileSync(file, 'utf8');
    assert.equal(written, typed.replace('div_le_iff hc', 'div_le_iff₀ hc').replace('div_le_iff hc', 'div_le_iff₀ hc'));
    assert.ok(written.includes('theorem mine : True := trivial') && written.includes('linarith -- typed'));
  });
});

test('a declaration edited meanwhile is skipped and says why; the user text stays', () => {
  inTemp(BROKEN_FILE, (file) => {
    const typed = BROKEN_FILE.replace('  exact h\n', '  exact h -- my own fix coming\n');
    writeFileSync(file, typed);
    const out = applyRepairs(file, BROKEN_FILE, repairs);
    assert.deepEqual(out.applied, ['ratio_two']);
    assert.deepEqual(
      out.skipped.map((s) => s.declaration),
      ['ratio_one'],
    );
    assert.match(out.skipped[0].reason, /changed after it was checked/);
    const written = readFileSync(file, 'utf8');
    assert.ok(written.includes('exact h -- my own fix coming'));
    assert.ok(written.includes('rw [div_le_iff hc]\n  exact h -- my own fix coming'), 'ratio_one untouched');
  });
});

test('a save that lands between the read and the rename is not overwritten: the step starts over from it', () => {
  inTemp(BROKEN_FILE, (file) => {
    let saves = 0;
    const out = applyRepairs(file, BROKEN_FILE, repairs, () => {
      if (saves++ === 0) writeFileSync(file, readFileSync(file, 'utf8') + '\ntheorem typed_late : True := trivial\n');
    });
    assert.equal(saves, 2);
    assert.deepEqual(out.applied, ['ratio_one', 'ratio_two']);
    assert.ok(readFileSync(file, 'utf8').endsWith('theorem typed_late : True := trivial\n'));
  });
});

test('CRLF line breaks and the byte-order mark are kept; a non-UTF-8 file is left alone', () => {
  const crlf = '\uFEFF' + BROKEN_FILE.replace(/\n/g, '\r\n');
  inTemp(crlf, (file) => {
    const out = applyRepairs(file, crlf, [repairOf(crlf, 'ratio_one')]);
    assert.deepEqual(out.applied, ['ratio_one']);
    const bytes = readFileSync(file);
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(bytes.toString('utf8'), crlf.replace('div_le_iff hc', 'div_le_iff₀ hc'));
  });
  const latin1 = Buffer.concat([Buffer.from(BROKEN_FILE), Buffer.from([0x2d, 0x2d, 0x20, 0xe9, 0x0a])]);
  inTemp(latin1, (file) => {
    const out = applyRepairs(file, BROKEN_FILE, repairs);
    assert.equal(out.written, null);
    assert.match(out.problem ?? '', /not valid UTF-8/);
    assert.deepEqual(readFileSync(file), latin1);
  });
  assert.equal(offsetAt(crlf, 0, 0), 0);
});
