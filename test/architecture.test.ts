// The import rules of docs/architecture.md, enforced by reading every import statement of the backend, the
// extension, the webviews and the benchmarks. The allowed imports come from the rooms table in that doc. The rules a
// linter can say (no process.env in the domain rooms, the imports each room must never make, no fetch) are in
// biome.jsonc, run by `npm run lint` and proved to fire by test/lint.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '..');
const DOC = join(root, 'docs', 'architecture.md');

interface Room {
  name: string;
  folders: string[];
  mayImport: Set<string>;
}

/** The rooms table of docs/architecture.md: name, folders (files or `dir/`), what it may import. */
function roomsFromDoc(): Room[] {
  const doc = readFileSync(DOC, 'utf8');
  const table = doc.slice(doc.indexOf('<!-- rooms:'), doc.indexOf('<!-- end of rooms -->'));
  const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Room') && !l.startsWith('|---'));
  return rows.map((row) => {
    const cells = row
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    const folders = [...cells[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    const mayImport = new Set(cells[3] === '—' ? [] : cells[3].split(',').map((s) => s.trim()));
    return { name: cells[0], folders, mayImport };
  });
}

const rooms = roomsFromDoc();

/** The room a repository path belongs to: the longest matching folder or file. */
function roomOf(path: string): string | null {
  let best: { name: string; length: number } | null = null;
  for (const room of rooms) {
    for (const f of room.folders) {
      const hit = f.endsWith('/') ? path.startsWith(f) : path === f;
      if (hit && (!best || f.length > best.length)) best = { name: room.name, length: f.length };
    }
  }
  return best?.name ?? null;
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (['node_modules', 'trainer', 'dist'].includes(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/** The file a relative specifier names (with TypeScript's extension and index rules), as a repository path. */
function resolveSpecifier(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.mjs`, `${base}.js`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate);
  }
  return relative(root, base);
}

interface Import {
  from: string;
  to: string;
  fromRoom: string | null;
  toRoom: string | null;
}

/** Every relative import of the product and the benchmarks: static, re-exports, dynamic and require. */
function imports(): Import[] {
  const out: Import[] = [];
  const pattern = /(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const top of ['backend', 'extension', 'media', 'bench']) {
    for (const file of sources(join(root, top))) {
      const from = relative(root, file);
      for (const m of readFileSync(file, 'utf8').matchAll(pattern)) {
        const to = resolveSpecifier(file, m[1]);
        out.push({ from, to, fromRoom: roomOf(from), toRoom: roomOf(to) });
      }
    }
  }
  return out;
}

const all = imports();
const crossing = all.filter((i) => i.fromRoom !== i.toRoom);
const show = (list: Import[]) => list.map((i) => `${i.from} -> ${i.to}`);

test('the rooms table is read, and every source file of the product and the benchmarks belongs to a room', () => {
  assert.ok(rooms.length >= 15, `rooms in docs/architecture.md: ${rooms.map((r) => r.name).join(', ')}`);
  assert.ok(all.length > 300, `imports read: ${all.length}`);
  const names = new Set(rooms.map((r) => r.name));
  for (const room of rooms)
    for (const other of room.mayImport) assert.ok(names.has(other), `${room.name} may import unknown room '${other}'`);
  const homeless = new Set<string>();
  for (const top of ['backend', 'extension', 'media', 'bench']) {
    for (const file of sources(join(root, top))) if (!roomOf(relative(root, file))) homeless.add(relative(root, file));
  }
  assert.deepEqual([...homeless], []);
});

test('every import between rooms is one the table allows', () => {
  const allowed = new Map(rooms.map((r) => [r.name, r.mayImport]));
  const outside = (to: string) => !to.startsWith('test/') && roomOf(to) === null; // package.json and the like
  const bad = crossing.filter((i) => i.fromRoom && i.toRoom && !allowed.get(i.fromRoom)!.has(i.toRoom));
  assert.deepEqual(show(bad), []);
  assert.deepEqual(show(crossing.filter((i) => i.toRoom === null && !outside(i.to) && !i.to.startsWith('test/'))), []);
});

/** Every cycle of a graph, each as its path. */
function cyclesIn(graph: Map<string, Set<string>>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' -> '));
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  return cycles;
}

const roomGraph = new Map<string, Set<string>>();
for (const i of crossing)
  if (i.fromRoom && i.toRoom) roomGraph.set(i.fromRoom, (roomGraph.get(i.fromRoom) ?? new Set()).add(i.toRoom));
const fileGraph = new Map<string, Set<string>>();
for (const i of all) if (i.from !== i.to) fileGraph.set(i.from, (fileGraph.get(i.from) ?? new Set()).add(i.to));

test('no import cycles between rooms', () => {
  assert.deepEqual(cyclesIn(roomGraph), []);
});

test('no import circle between files, type-only imports included', () => {
  assert.deepEqual(cyclesIn(fileGraph), []);
});

test('the import graph in figures (docs/architecture.md records them): no arrow up, no circle', (t) => {
  const order = new Map(rooms.map((r, i) => [r.name, i]));
  const between = crossing.filter((i) => i.fromRoom && i.toRoom);
  const up = between.filter((i) => order.get(i.toRoom!)! >= order.get(i.fromRoom!)!);
  const arrows = [...roomGraph.values()].reduce((n, set) => n + set.size, 0);
  const files = new Set([...all.map((i) => i.from), ...fileGraph.keys()]).size;
  t.diagnostic(
    `import graph: ${files} files with imports, ${all.length} relative imports, ${between.length} between rooms ` +
      `(${arrows} room-to-room arrows), ${up.length} running up, ${cyclesIn(roomGraph).length} room cycles, ` +
      `${cyclesIn(fileGraph).length} file circles`,
  );
  assert.deepEqual(show(up), []);
});

test('the floors: every room imports only rooms listed above it in the table, so no arrow runs up', () => {
  const order = new Map(rooms.map((r, i) => [r.name, i]));
  const up: string[] = [];
  for (const room of rooms)
    for (const other of room.mayImport)
      if (order.get(other)! >= order.get(room.name)!) up.push(`${room.name} -> ${other}`);
  assert.deepEqual(up, []);
});

/** The domain rooms: below the composition root and the entry points (cli, the language server's start). */
const domainRooms = new Set(['lean', 'model', 'prover', 'editor', 'training', 'eval', 'store', 'demo', 'api']);

// Settings are handed down: no domain room imports a settings reader as a value, or the app, or names process.env
// (biome.jsonc: noRestrictedImports, noProcessEnv; test/lint.test.ts). What the linter cannot see is left here.
test('settings are handed down: no domain room imports the settings module whole', () => {
  const bad: string[] = [];
  for (const file of sources(join(root, 'backend'))) {
    const path = relative(root, file);
    const room = roomOf(path);
    if (!room || !domainRooms.has(room)) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/import\s+\*\s+as\s+\w+\s+from\s*['"]([^'"]+)['"]/g))
      if (roomOf(resolveSpecifier(file, m[1])) === 'settings') bad.push(`${path}: imports all of ${m[1]}`);
  }
  assert.deepEqual(bad, []);
});

test('every child process a domain room starts is given its environment (none inherits it unseen)', () => {
  // a spawn without `env` inherits process.env: each call of a node:child_process function passes an env, or
  // spawnOptions(spec), whose ProcessSpec requires one (backend/lean/processes.ts)
  const calls: string[] = [];
  const unseen: string[] = [];
  for (const file of sources(join(root, 'backend'))) {
    const path = relative(root, file);
    const room = roomOf(path);
    if (!room || !domainRooms.has(room)) continue;
    const text = readFileSync(file, 'utf8');
    const names = [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*['"]node:child_process['"]/g)]
      .flatMap((m) => m[1].split(','))
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '));
    const promised = [...text.matchAll(/const\s+(\w+)\s*=\s*promisify\((\w+)\)/g)].filter((m) => names.includes(m[2]));
    const starters = [...names, ...promised.map((m) => m[1])];
    if (starters.length === 0) continue;
    for (const m of text.matchAll(new RegExp(`(?<![.\\w])(${starters.join('|')})\\(`, 'g'))) {
      let depth = 0;
      let end = m.index + m[0].length - 1;
      for (; end < text.length; end++) {
        if (text[end] === '(') depth++;
        else if (text[end] === ')' && --depth === 0) break;
      }
      const call = text.slice(m.index, end + 1).replace(/'[^']*'|"[^"]*"|`[^`]*`/g, "''");
      if (/^promisify\(/.test(call)) continue;
      const line = text.slice(0, m.index).split('\n').length;
      calls.push(`${path}:${line}`);
      if (!/\benv\b/.test(call) && !/\bspawnOptions\(/.test(call)) unseen.push(`${path}:${line}: ${m[1]}(…)`);
    }
  }
  assert.ok(calls.length >= 15, `child-process calls found: ${calls.length}`);
  assert.deepEqual(unseen, []);
});

test('only backend/settings/settings.ts reads environment variables; elsewhere process.env is only passed on to child processes', () => {
  const reads: string[] = [];
  for (const top of ['backend', 'extension']) {
    for (const file of sources(join(root, top))) {
      const path = relative(root, file);
      // the settings module, and the stand-in REPL: a program of its own (a child process, like the Python trainer)
      if (path === 'backend/settings/settings.ts' || path === 'backend/demo/stand-in-repl/repl.mjs') continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const code = line.replace(/'[^']*'|"[^"]*"|`[^`]*`/g, "''"); // text inside strings is not code
          if (/process\.env\s*(\.|\[|\?\.)/.test(code) || /\{[^}]*\}\s*=\s*process\.env\b/.test(code))
            reads.push(`${path}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  assert.deepEqual(reads, []);
});

test('the extension reads and writes VS Code settings only in extension/config.ts', () => {
  const elsewhere = [...sources(join(root, 'extension'))]
    .map((f) => relative(root, f))
    .filter((f) => f !== 'extension/config.ts' && /getConfiguration\s*\(/.test(readFileSync(join(root, f), 'utf8')));
  assert.deepEqual(elsewhere, []);
});

test('the composition root is the only wiring place: no store, registry of running proofs or training service is built outside backend/app/', () => {
  const built: string[] = [];
  for (const top of ['backend', 'bench']) {
    for (const file of sources(join(root, top))) {
      const path = relative(root, file);
      if (path.startsWith('backend/app/')) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\bnew\s+(?:\w*Store|RunningProofs)\s*\(|(?<!function\s)\bopenTrainingService\(/.test(line))
            built.push(`${path}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  assert.deepEqual(built, []);
});

test("ApiContext has no optional service, and no one name two interfaces (the App's options and the server's)", () => {
  const server = readFileSync(join(root, 'backend', 'api', 'server.ts'), 'utf8');
  const body = server.slice(server.indexOf('export interface ApiContext {'));
  const fields = body.slice(0, body.indexOf('\n}\n'));
  assert.ok(fields.includes('verifier: BatchVerifier'), 'ApiContext was found');
  assert.deepEqual(
    fields
      .split('\n')
      .filter((l) => /^\s{2}\w+\?:/.test(l))
      .map((l) => l.trim()),
    [],
  );
  assert.ok(!/interface AppOptions\b/.test(server), 'api/server.ts names its options HttpOptions');
});

// One HTTP client library in the backend, axios: `fetch` is refused by biome.jsonc (noRestrictedGlobals).
test('the protocol room imports no package', () => {
  const found: string[] = [];
  for (const file of sources(join(root, 'backend', 'protocol'))) {
    const path = relative(root, file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g))
      if (!m[1].startsWith('.')) found.push(`${path}: imports the package ${m[1]}`);
  }
  assert.deepEqual(found, []);
});

test('tests live by room: every room under backend/ has its test/<room>/ folder (or a written reason why not)', () => {
  // the rooms without a folder of their own, each with the reason; keep this short
  const without: Record<string, string> = {};

  const folders = readdirSync(join(root, 'backend')).filter((n) => statSync(join(root, 'backend', n)).isDirectory());
  assert.ok(folders.length >= 14, `rooms found: ${folders.join(', ')}`);
  const missing = folders.filter((n) => !(n in without) && !existsSync(join(root, 'test', n)));
  assert.deepEqual(missing, [], 'add test/<room>/ for these rooms, or a written reason above');
  const stale = Object.keys(without).filter((n) => existsSync(join(root, 'test', n)) || !folders.includes(n));
  assert.deepEqual(stale, [], 'these reasons are no longer needed');
});

test("no code decides anything from the text of an error message (only another program's words, where nothing else exists)", () => {
  // What a failure lacks travels as a kind (backend/protocol/errors.ts, an error class's `kind`, an HTTP answer's
  // `kind`, a ResponseError's `data.kind`). Reading the words instead is allowed only for another program's output,
  // each with its source:
  const allowed: { file: string; has: string; why: string }[] = [
    {
      file: 'backend/model/openai/engine.ts',
      has: 'N_REFUSED.test(serverMessage(',
      why: 'llama.cpp answers n > 1 with HTTP 500 "Only one completion choice is allowed" (tools/server/server.cpp) and nothing else',
    },
    {
      file: 'backend/lean/leanFileRunner.ts',
      has: '/execvp .*(?:No such file|Permission denied)',
      why: 'bwrap reports a command it cannot start only on stderr ("bwrap: execvp …: No such file or directory", bubblewrap\'s bubblewrap.c)',
    },
    {
      file: 'extension/words.ts',
      has: 'failed unexpectedly without providing any details',
      why: "vscode-jsonrpc's own words for a handler that threw no message (lib/common/connection.js): reworded for the editor",
    },
  ];
  const searches = '(?:includes|match|matchAll|startsWith|endsWith|search|indexOf)';
  const found: string[] = [];
  for (const top of ['backend', 'extension', 'media', 'bench']) {
    for (const file of sources(join(root, top))) {
      const path = relative(root, file);
      const lines = readFileSync(file, 'utf8').split('\n');
      // names that hold an error's words: message, msg, stderr, and what is computed from them (`.message`, forEditor)
      const words = new Set(['message', 'msg', 'stderr']);
      for (const line of lines) {
        const m = /(?:const|let)\s+(\w+)\s*(?::[^=]+)?=\s*(.*)$/.exec(line);
        if (m && /\.message\b|\bmessage\b|\bstderr\b|forEditor\(/.test(m[2])) words.add(m[1]);
      }
      const names = [...words].join('|');
      const reads = [
        /\.test\([^;]*(?:\.message\b|[a-z]Message\()/, // /re/.test(err.message), /re/.test(serverMessage(text))
        new RegExp(`\\.message\\)?\\s*\\.${searches}\\(`), // err.message.includes(…), (err as Error).message).match(…)
        new RegExp(`(?<![.\\w])(?:${names})\\)?\\s*\\.${searches}\\(`), // message.includes(…)
        new RegExp(`\\.test\\(\\s*(?:${names})\\s*\\)`), // /re/.test(text) where text = forEditor(message)
      ];
      lines.forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, '');
        if (!reads.some((r) => r.test(code))) return;
        if (allowed.some((a) => a.file === path && line.includes(a.has))) return;
        found.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
  }
  assert.deepEqual(found, []);
  for (const a of allowed) {
    const text = readFileSync(join(root, a.file), 'utf8');
    assert.ok(text.includes(a.has), `${a.file} no longer reads "${a.has}": drop it from the allowed list (${a.why})`);
  }
});

test("each room's test files reach their room: they import it, through a helper beside them, or run the `kimina` CLI", () => {
  const exempt: Record<string, string> = {
    'test/extension/vsix.test.ts': 'unpacks the packaged extension (scripts/package.mjs) and reads its native files',
  };
  const own = (room: string): RegExp =>
    room === 'cli'
      ? /['"`][./]*backend\/cli(?:\.ts|\/)/
      : room === 'extension' || room === 'media'
        ? new RegExp(`['"][./]*${room}/`)
        : new RegExp(`['"][./]*backend/${room}['/]`);
  const runsCli = /backend\/cli\.ts|dist\/cli\.js|['"]cli\.ts['"]/;
  const stray: string[] = [];
  let checked = 0;
  for (const room of readdirSync(join(root, 'test'))) {
    const dir = join(root, 'test', room);
    if (!statSync(dir).isDirectory() || ['e2e', 'trainer', 'security', 'fixtures'].includes(room)) continue;
    for (const file of sources(dir)) {
      if (!file.endsWith('.test.ts')) continue;
      const path = relative(root, file);
      checked++;
      const text = readFileSync(file, 'utf8');
      // the helpers it imports from its own folder (or one level below) count as its own imports
      const helpers = [...text.matchAll(/from\s*['"](\.\/[^'"]+)['"]/g)].map((m) => resolveSpecifier(file, m[1]));
      const texts = [
        text,
        ...helpers.filter((h) => existsSync(join(root, h))).map((h) => readFileSync(join(root, h), 'utf8')),
      ];
      if (texts.some((t) => own(room).test(t) || runsCli.test(t)) || path in exempt) continue;
      stray.push(path);
    }
  }
  assert.ok(checked >= 120, `test files checked: ${checked}`);
  assert.deepEqual(stray, [], 'move these to the room they test (or say why above)');
});
