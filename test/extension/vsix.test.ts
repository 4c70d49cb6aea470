// `npm run package` (scripts/package.mjs) writes the five vsix files; each is unpacked and every native file in it
// is read by its header: it must be that target's format and architecture (ELF x86-64 / aarch64, Mach-O arm64 /
// x86_64, PE32+ x86-64), and each expected native module must be there (libsql's SQLite, resvg, onnxruntime's
// binding and library — none of onnxruntime on darwin-x64, and no better-sqlite3 anywhere). The linux-x64
// package's native modules are then loaded from the unpacked folder on this machine.
// Packages for other platforms come from .kimina-cache/npm/ (fetched once with npm pack; CI caches that folder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '..', '..');

type Arch = 'x64' | 'arm64';
interface Native {
  format: 'ELF' | 'Mach-O' | 'PE32+' | 'PE32';
  arch: string;
}

/** The format and architecture of a native file from its first bytes, or null when it is not one. */
export function nativeHeader(buf: Buffer): Native | null {
  if (buf.length >= 20 && buf.readUInt32BE(0) === 0x7f454c46) {
    const le = buf[5] === 1;
    const machine = le ? buf.readUInt16LE(18) : buf.readUInt16BE(18);
    const arch = machine === 0x3e ? 'x64' : machine === 0xb7 ? 'arm64' : `elf-machine-${machine}`;
    return { format: 'ELF', arch: buf[4] === 2 ? arch : `${arch}-32bit` };
  }
  if (buf.length >= 8 && (buf.readUInt32LE(0) === 0xfeedfacf || buf.readUInt32LE(0) === 0xfeedface)) {
    const cpu = buf.readUInt32LE(4);
    const arch = cpu === 0x01000007 ? 'x64' : cpu === 0x0100000c ? 'arm64' : `macho-cpu-${cpu.toString(16)}`;
    return { format: 'Mach-O', arch };
  }
  if (buf.length >= 8 && buf.readUInt32BE(0) === 0xcafebabe && buf.readUInt32BE(4) < 20) {
    // a universal binary: every slice listed
    const n = buf.readUInt32BE(4);
    const archs: string[] = [];
    for (let i = 0; i < n && 8 + i * 20 + 4 <= buf.length; i++) {
      const cpu = buf.readUInt32BE(8 + i * 20);
      archs.push(cpu === 0x01000007 ? 'x64' : cpu === 0x0100000c ? 'arm64' : `macho-cpu-${cpu.toString(16)}`);
    }
    return { format: 'Mach-O', arch: archs.join('+') };
  }
  if (buf.length >= 0x40 && buf.toString('latin1', 0, 2) === 'MZ') {
    const pe = buf.readUInt32LE(0x3c);
    if (pe + 26 > buf.length || buf.toString('latin1', pe, pe + 4) !== 'PE\0\0') return null;
    const machine = buf.readUInt16LE(pe + 4);
    const magic = buf.readUInt16LE(pe + 24);
    const arch = machine === 0x8664 ? 'x64' : machine === 0xaa64 ? 'arm64' : `pe-machine-${machine.toString(16)}`;
    return { format: magic === 0x20b ? 'PE32+' : 'PE32', arch };
  }
  return null;
}

function head(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const expected: Record<string, { format: Native['format']; arch: Arch; modules: string[]; onnx: boolean }> = {
  'linux-x64': {
    format: 'ELF',
    arch: 'x64',
    onnx: true,
    modules: ['@libsql/linux-x64-gnu/index.node', '@resvg/resvg-js-linux-x64-gnu/resvgjs.linux-x64-gnu.node'],
  },
  'linux-arm64': {
    format: 'ELF',
    arch: 'arm64',
    onnx: true,
    modules: ['@libsql/linux-arm64-gnu/index.node', '@resvg/resvg-js-linux-arm64-gnu/resvgjs.linux-arm64-gnu.node'],
  },
  'darwin-arm64': {
    format: 'Mach-O',
    arch: 'arm64',
    onnx: true,
    modules: ['@libsql/darwin-arm64/index.node', '@resvg/resvg-js-darwin-arm64/resvgjs.darwin-arm64.node'],
  },
  'darwin-x64': {
    format: 'Mach-O',
    arch: 'x64',
    onnx: false,
    modules: ['@libsql/darwin-x64/index.node', '@resvg/resvg-js-darwin-x64/resvgjs.darwin-x64.node'],
  },
  'win32-x64': {
    format: 'PE32+',
    arch: 'x64',
    onnx: true,
    modules: ['@libsql/win32-x64-msvc/index.node', '@resvg/resvg-js-win32-x64-msvc/resvgjs.win32-x64-msvc.node'],
  },
};

const onnxFiles: Record<string, string[]> = {
  'linux-x64': ['onnxruntime_binding.node', 'libonnxruntime.so.1'],
  'linux-arm64': ['onnxruntime_binding.node', 'libonnxruntime.so.1'],
  'darwin-arm64': ['onnxruntime_binding.node', 'libonnxruntime.1.30.0.dylib'],
  'win32-x64': ['onnxruntime_binding.node', 'onnxruntime.dll'],
};

test("the header reader tells ELF, Mach-O and PE apart by architecture (this machine's own node)", () => {
  const node = nativeHeader(head(process.execPath));
  assert.deepEqual(node, { format: 'ELF', arch: process.arch === 'arm64' ? 'arm64' : 'x64' });
  const macho = Buffer.alloc(16);
  macho.writeUInt32LE(0xfeedfacf, 0);
  macho.writeUInt32LE(0x0100000c, 4);
  assert.deepEqual(nativeHeader(macho), { format: 'Mach-O', arch: 'arm64' });
  const pe = Buffer.alloc(0x100);
  pe.write('MZ', 0, 'latin1');
  pe.writeUInt32LE(0x80, 0x3c);
  pe.write('PE\0\0', 0x80, 'latin1');
  pe.writeUInt16LE(0x8664, 0x84);
  pe.writeUInt16LE(0x20b, 0x80 + 24);
  assert.deepEqual(nativeHeader(pe), { format: 'PE32+', arch: 'x64' });
  assert.equal(nativeHeader(Buffer.from('#!/bin/sh\n')), null);
});

test(
  "npm run package writes five vsix files, each with its own platform's native modules",
  { timeout: 600_000 },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'kimina-vsix-'));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'package.mjs'), '--out-dir', out], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    assert.equal(r.status, 0, r.stderr + r.stdout);
    console.log(`packaging five targets: ${((Date.now() - t0) / 1000).toFixed(0)} s\n${r.stdout}`);
    const vsixes = readdirSync(out)
      .filter((f) => f.endsWith('.vsix'))
      .sort();
    assert.deepEqual(
      vsixes,
      Object.keys(expected)
        .map((t) => `kimina-prover-${t}.vsix`)
        .sort(),
    );
    for (const [target, want] of Object.entries(expected)) {
      const dir = join(out, target);
      const unzip = spawnSync('unzip', ['-q', join(out, `kimina-prover-${target}.vsix`), '-d', dir], {
        encoding: 'utf8',
      });
      assert.equal(unzip.status, 0, unzip.stderr);
      assert.match(
        spawnSync('cat', [join(dir, 'extension.vsixmanifest')], { encoding: 'utf8' }).stdout,
        new RegExp(`TargetPlatform="${target}"`),
      );
      const ext = join(dir, 'extension');
      const natives = files(ext).flatMap((f) => {
        const h = nativeHeader(head(f));
        return h ? [{ file: relative(ext, f), ...h }] : [];
      });
      // every native file is this target's
      for (const n of natives) assert.deepEqual([n.format, n.arch], [want.format, want.arch], `${target}: ${n.file}`);
      // no file that looks native by name without a native header (a truncated or wrong download)
      for (const f of files(ext).filter((f) => /\.(node|so(\.\d+)*|dylib|dll)$/.test(f)))
        assert.ok(nativeHeader(head(f)), `${target}: ${relative(ext, f)} has no native header`);
      const names = new Set(natives.map((n) => n.file));
      for (const m of want.modules) assert.ok(names.has(`node_modules/${m}`), `${target} lacks ${m}`);
      const ort = natives.filter((n) => n.file.startsWith('node_modules/onnxruntime-node/'));
      if (want.onnx) {
        for (const f of onnxFiles[target])
          assert.ok(
            ort.some((n) => n.file.endsWith(`/${f}`)),
            `${target} lacks onnxruntime ${f} (has ${ort.map((n) => n.file)})`,
          );
      } else assert.deepEqual(ort, [], `${target} should carry no onnxruntime`);
      assert.ok(![...names].some((f) => f.includes('better-sqlite3') || f.includes('better_sqlite3')), target);
      // the rest of the extension
      for (const f of ['dist/cli.js', 'dist/extension.js', 'package.json', 'data/minif2f-lean4/LICENSE'])
        assert.ok(statSync(join(ext, f)).isFile(), `${target} lacks ${f}`);
      assert.equal(readdirSync(join(ext, 'data', 'minif2f-lean4', 'MiniF2F', 'Test')).length, 244);
    }
    // the linux-x64 package's modules load here, from the unpacked extension, on plain Node
    const ext = join(out, 'linux-x64', 'extension');
    const load = spawnSync(
      process.execPath,
      [
        '-e',
        `const D = require(${JSON.stringify(join(ext, 'node_modules', 'libsql'))});
       const db = new D(':memory:'); const v = db.prepare('select sqlite_version() v').get().v;
       const { Resvg } = require(${JSON.stringify(join(ext, 'node_modules', '@resvg', 'resvg-js'))});
       const png = new Resvg('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>').render().asPng();
       const ort = require(${JSON.stringify(join(ext, 'node_modules', 'onnxruntime-node'))});
       console.log(JSON.stringify({ sqlite: v, png: png.length, ort: typeof ort.InferenceSession.create }));`,
      ],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    );
    assert.equal(load.status, 0, load.stderr);
    const loaded = JSON.parse(load.stdout) as { sqlite: string; png: number; ort: string };
    assert.match(loaded.sqlite, /^3\./);
    assert.ok(loaded.png > 0);
    assert.equal(loaded.ort, 'function');
  },
);
