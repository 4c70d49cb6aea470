import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readLean, sorriesOf } from './backend/lean/source/reader';
function* walk(d: string): Generator<string> { for (const n of readdirSync(d)) { const p = join(d, n); if (statSync(p).isDirectory()) yield* walk(p); else if (p.endsWith('.lean')) yield p; } }
let decls = 0, sorries = 0, noDecl = 0;
for (const f of walk(process.argv[2])) {
  const src = readFileSync(f, 'utf8');
  const r = readLean(src);
  const s = sorriesOf(src);
  decls += r.declarations.length; sorries += s.length;
  const orphans = s.filter((x) => !x.declaration);
  noDecl += orphans.length;
  const kinds: Record<string, number> = {};
  for (const d of r.declarations) kinds[d.kind] = (kinds[d.kind] ?? 0) + 1;
  console.log(f.replace(process.argv[2], ''), 'mod', r.header.module, 'imports', r.header.imports.length, 'body@', r.header.bodyStart.line, 'problems', r.header.problems.length, JSON.stringify(kinds), 'sorries', s.length, 'orphan', orphans.map((o) => o.sorry.start.line).join(','));
  if (process.argv[3]) for (const d of r.declarations) console.log('   ', d.start.line, d.end.line, d.kind, d.name, d.proof?.kind ?? '-', JSON.stringify(d.statement.slice(0, 80)));
}
console.log({ decls, sorries, noDecl });
