// The source reader on real files of public Lean projects (test/fixtures/real-lean/, vendored with their licences;
// README.md there names each source commit): every header read as Lean reads it, every declaration found, every
// sorry targetable, and each declaration's own proof spliced back reproduces the file byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { lexLean } from '../../backend/lean/lexer';
import { findDeclarations, readLean, sorriesOf } from '../../backend/lean/source/reader';
import { splitHeader } from '../../backend/lean/header';
import { findUntrustedCode } from '../../backend/lean/untrusted';
import { applyEdit } from '../../backend/editor/splice';
import { findDeclarations as editorDeclarations, offsetAt, positionAt } from '../../backend/editor/leanSource';

const root = join(__dirname, '..', 'fixtures', 'real-lean');

function* leanFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* leanFiles(path);
    else if (path.endsWith('.lean')) yield path;
  }
}
const corpus = [...leanFiles(root)].map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
const project = (p: string): string => p.split('/')[0];

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
const modifiers = new Set([
  'private',
  'public',
  'protected',
  'noncomputable',
  'partial',
  'unsafe',
  'nonrec',
  'meta',
  'local',
  'scoped',
]);

/**
 * An independent count of the declarations of a file, from the lexer's tokens alone: a declaration keyword that
 * begins its line, or follows an attribute list (`@[simp] theorem`) or a modifier (`protected theorem`). Keywords
 * inside `attribute [instance] …`, `deriving instance` or syntax quotations follow other tokens and are not counted.
 */
function keywordCount(text: string): number {
  const tokens = lexLean(text);
  let n = 0;
  let attributeDepth = 0;
  let attributeClosedAt = -1;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.text === '@[') attributeDepth = 1;
    else if (attributeDepth > 0 && t.text === '[') attributeDepth++;
    else if (attributeDepth > 0 && t.text === ']' && --attributeDepth === 0) attributeClosedAt = k;
    const prev = tokens[k - 1];
    if (t.kind !== 'ident' || !declarationWords.has(t.text) || attributeDepth > 0) continue;
    const startsLine = !prev || prev.endLine < t.line;
    const afterAttribute = attributeClosedAt === k - 1;
    const afterModifier = prev?.kind === 'ident' && modifiers.has(prev.text);
    if (startsLine || afterAttribute || afterModifier) n++;
  }
  return n;
}

test('the corpus is there: three projects, module files with copyright headers, files with sorries', () => {
  const projects = new Set(corpus.map((f) => project(f.path)));
  assert.deepEqual([...projects].sort(), ['batteries', 'mathematics_in_lean', 'mathlib']);
  for (const p of projects) assert.ok(readFileSync(join(root, p, 'LICENSE'), 'utf8').includes('Apache License'), p);
  assert.ok(corpus.length >= 35, `${corpus.length} files`);
  const modules = corpus.filter((f) => readLean(f.text).header.module);
  assert.ok(modules.length >= 19, `${modules.length} module files`);
  assert.ok(
    modules.every((f) => f.text.startsWith('/-')),
    'module files start with a copyright comment',
  );
});

test('every header is read as Lean reads it: no problems, every import line found, the body after it', () => {
  let imports = 0;
  for (const { path, text } of corpus) {
    const h = readLean(text).header;
    assert.deepEqual(h.problems, [], path);
    // every line that begins with an import keyword sequence is one import of the header
    const importLines = text.split('\n').filter((l) => /^(public )?(meta )?import /.test(l));
    assert.equal(h.imports.length, importLines.length, path);
    imports += h.imports.length;
    const body = splitHeader(text, { collapseMathlib: false });
    assert.ok(!/^(public |meta )*import /m.test(body.body), `${path}: an import left in the body`);
    // the verifier's filter finds nothing in a header it will rebuild
    const header = findUntrustedCode(text, {}, body.headerLines).filter((r) => r.line <= body.headerLines);
    assert.deepEqual(header, [], path);
  }
  assert.ok(imports >= 60, `${imports} imports`);
});

test('every declaration is found: the finder agrees with an independent count of declaration keywords', () => {
  const perProject: Record<string, number> = {};
  for (const { path, text } of corpus) {
    const decls = findDeclarations(text).filter((d) => d.kind !== 'custom');
    assert.equal(decls.length, keywordCount(text), path);
    perProject[project(path)] = (perProject[project(path)] ?? 0) + decls.length;
    // declarations do not overlap and each statement lies inside its declaration
    for (let k = 1; k < decls.length; k++) assert.ok(decls[k - 1].end.offset <= decls[k].start.offset, path);
  }
  // the counts this corpus holds (README.md): a change here means the finder reads a file differently
  assert.deepEqual(perProject, { batteries: 298, mathematics_in_lean: 492, mathlib: 26 });
});

test('every sorry is found and targetable: an enclosing declaration and a term that holds it', () => {
  let total = 0;
  const kinds: Record<string, number> = {};
  for (const { path, text } of corpus) {
    const sorryTokens = lexLean(text).filter((t) => t.kind === 'ident' && t.text === 'sorry').length;
    const found = sorriesOf(text);
    assert.equal(found.length, sorryTokens, path);
    for (const s of found) {
      const where = `${path}:${s.sorry.start.line}`;
      assert.ok(s.declaration, `${where}: no enclosing declaration`);
      const d = s.declaration;
      assert.ok(d.range.start.offset <= s.sorry.start.offset && s.sorry.end.offset <= d.range.end.offset, where);
      assert.ok(d.body && d.body.start.offset <= s.sorry.start.offset, `${where}: the sorry is not in the body`);
      assert.equal(s.part, 'body', where);
      assert.ok(
        s.target.range.start.offset <= s.sorry.start.offset && s.sorry.end.offset <= s.target.range.end.offset,
        where,
      );
      assert.equal(text.slice(s.sorry.start.offset, s.sorry.end.offset), 'sorry', where);
      kinds[d.kind] = (kinds[d.kind] ?? 0) + 1;
    }
    total += found.length;
  }
  assert.equal(total, 165);
  // sorries stand in theorems and examples, and in defs and instances too
  for (const kind of ['theorem', 'example', 'def', 'instance'])
    assert.ok((kinds[kind] ?? 0) > 0, `${kind}: ${JSON.stringify(kinds)}`);
});

test("splicing each declaration's own proof back reproduces the file byte for byte, and the statement is stable", () => {
  let spliced = 0;
  for (const { path, text } of corpus) {
    // the editor's view (LSP positions) of the same declarations: the body after the statement's `:=`
    for (const d of editorDeclarations(text)) {
      if (d.statementEnd === null) continue;
      const body = text.slice(d.statementEnd, d.end);
      const edit = { range: { start: positionAt(text, d.statementEnd), end: positionAt(text, d.end) }, newText: body };
      assert.equal(
        applyEdit(text, edit, (l, c) => offsetAt(text, l, c)),
        text,
        `${path}: ${d.name}`,
      );
    }
    // the reader's body range: replace it by `sorry`, read again, splice the proof back
    const decls = findDeclarations(text);
    for (const d of decls) {
      if (!d.body) continue;
      const original = text.slice(d.body.start.offset, d.body.end.offset);
      const holed = text.slice(0, d.body.start.offset) + ' sorry' + text.slice(d.body.end.offset);
      const again = findDeclarations(holed);
      const same = again.find((x) => x.start.offset === d.start.offset);
      assert.ok(same?.body, `${path}: ${d.name} lost its body`);
      assert.equal(same.statement, d.statement, `${path}: ${d.name}`);
      assert.equal(again.length, decls.length, `${path}: ${d.name}`);
      const back = holed.slice(0, same.body.start.offset) + original + holed.slice(same.body.end.offset);
      assert.equal(back, text, `${path}: ${d.name}`);
      spliced++;
    }
  }
  assert.ok(spliced >= 650, `${spliced} declarations spliced`);
});
