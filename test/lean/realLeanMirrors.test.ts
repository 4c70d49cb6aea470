// The source reader over whole public Lean projects that are not vendored here, read from local git clones when
// LEAN_GIT_MIRRORS names a folder of them (`<owner>+<name>/repo`, git directories; never copied here); without them
// the test skips. The same checks as the vendored corpus (realLeanCorpus.test.ts): headers as Lean reads them, every
// declaration found, every sorry of a declaration targetable, and each declaration that holds a sorry or is made by
// the project's own command spliced back byte for byte with a stable statement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lexLean } from '../../backend/lean/lexer';
import { findDeclarations, readLean, sorriesOf } from '../../backend/lean/source/reader';
import { leanFilesOf, mirrorOf } from './mirrorFiles';

const projects = [
  'leanprover-community+batteries', // the module system, copyright headers, meta code
  'leanprover-community+mathematics_in_lean', // exercises with sorries, its own MIL.Common
  'dwrensha+compfiles', // a competition archive: `problem` / `determine` commands of its own
  'teorth+analysis', // a textbook companion: sorries in defs, instances and where clauses
];

const declarationWords = new Set([
  'theorem',
  'lemma',
  'example',
  'def',
  'abbrev',
  'instance',
  'structure',
  'inductive',
  'class',
  'axiom',
  'opaque',
]);
const modifiers = new Set(['private', 'public', 'protected', 'noncomputable', 'partial', 'unsafe', 'nonrec', 'meta']);
const scopes = new Set(['local', 'scoped']);

/** Declaration keywords that begin a line or follow an attribute list or modifiers (not `attribute [local instance]`). */
function keywordCount(text: string): number {
  const tokens = lexLean(text);
  let n = 0;
  let depth = 0;
  let closedAt = -1;
  let inAttributeCommand = false;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const prev = tokens[k - 1];
    if (!prev || prev.endLine < t.line) inAttributeCommand = t.text === 'attribute';
    if (t.text === '@[') depth = 1;
    else if (depth > 0 && t.text === '[') depth++;
    else if (depth > 0 && t.text === ']' && --depth === 0) closedAt = k;
    if (t.kind !== 'ident' || !declarationWords.has(t.text) || depth > 0 || inAttributeCommand) continue;
    const startsLine = !prev || prev.endLine < t.line;
    const afterModifier = prev?.kind === 'ident' && (modifiers.has(prev.text) || scopes.has(prev.text));
    if (startsLine || closedAt === k - 1 || afterModifier) n++;
  }
  return n;
}

for (const name of projects) {
  const repo = mirrorOf(name);
  test(`the reader over all of ${name}`, { skip: !repo && 'LEAN_GIT_MIRRORS has no clone of it' }, (t) => {
    const tally = { files: 0, modules: 0, declarations: 0, custom: 0, sorries: 0, statementSorries: 0, spliced: 0 };
    for (const { path, text } of leanFilesOf(repo as string)) {
      const read = readLean(text);
      assert.deepEqual(read.header.problems, [], path);
      const decls = read.declarations;
      assert.equal(decls.filter((d) => d.kind !== 'custom').length, keywordCount(text), `${path}: declarations`);
      for (const s of sorriesOf(text)) {
        // a sorry outside every declaration (`#eval (sorry : Nat)`, `#check sorry`) is no proof to write
        if (!s.declaration) continue;
        // a sorry in the statement (`example : P ↔ sorry`, "fill in the first sorry") is the user's placeholder
        if (s.part === 'statement') {
          tally.statementSorries++;
          continue;
        }
        assert.ok(
          s.declaration.body && s.declaration.body.start.offset <= s.sorry.start.offset,
          `${path}:${s.sorry.start.line}`,
        );
        tally.sorries++;
      }
      for (const d of decls) {
        if (!d.body || (d.kind !== 'custom' && d.sorries.length === 0)) continue;
        const holed = text.slice(0, d.body.start.offset) + ' sorry' + text.slice(d.body.end.offset);
        const again = findDeclarations(holed).find((x) => x.start.offset === d.start.offset);
        assert.equal(again?.statement, d.statement, `${path}: ${d.name}`);
        const back = holed.slice(0, again.body!.start.offset) + text.slice(d.body.start.offset, d.body.end.offset);
        assert.equal(back + holed.slice(again.body!.end.offset), text, `${path}: ${d.name}`);
        tally.spliced++;
      }
      tally.files++;
      if (read.header.module) tally.modules++;
      tally.declarations += decls.length;
      tally.custom += decls.filter((d) => d.kind === 'custom').length;
    }
    t.diagnostic(JSON.stringify(tally));
    assert.ok(tally.files > 10, `${tally.files} files`);
  });
}
