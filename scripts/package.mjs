// `npm run package`: one .vsix per VS Code target — linux-x64, linux-arm64, darwin-arm64, darwin-x64, win32-x64 —
// each carrying that platform's native binaries from npm: libsql's @libsql/<platform> package (SQLite), resvg's
// @resvg/resvg-js-<platform> package (plots), and onnxruntime-node's bundled bin/napi-v6/<os>/<arch> (the
// in-process engine; onnxruntime-node 1.30 has none for darwin-x64, so that vsix has no in-process engine and
// says so on first run). Packages another platform needs are fetched once with `npm pack` into
// .kimina-cache/npm/ (kept between runs; CI caches the folder), those of this machine are taken from node_modules.
// Each target is staged in out/package/<target>/ with exactly what the extension needs (this list is the
// allow-list that .vscodeignore used to be), then `vsce package --target <target>` runs there.
//
//   node scripts/package.mjs [--targets linux-x64,win32-x64] [--out-dir DIR] [--out FILE (one target)] [--no-build]
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Per target: the npm package of each native module, and onnxruntime-node's binary folder (null: none). */
export const TARGETS = {
  'linux-x64': {
    libsql: '@libsql/linux-x64-gnu',
    resvg: '@resvg/resvg-js-linux-x64-gnu',
    onnx: 'linux/x64',
    koffi: '@koromix/koffi-linux-x64',
  },
  'linux-arm64': {
    libsql: '@libsql/linux-arm64-gnu',
    resvg: '@resvg/resvg-js-linux-arm64-gnu',
    onnx: 'linux/arm64',
    koffi: '@koromix/koffi-linux-arm64',
  },
  'darwin-arm64': {
    libsql: '@libsql/darwin-arm64',
    resvg: '@resvg/resvg-js-darwin-arm64',
    onnx: 'darwin/arm64',
    koffi: '@koromix/koffi-darwin-arm64',
  },
  'darwin-x64': { libsql: '@libsql/darwin-x64', resvg: '@resvg/resvg-js-darwin-x64', onnx: null, koffi: null },
  'win32-x64': {
    libsql: '@libsql/win32-x64-msvc',
    resvg: '@resvg/resvg-js-win32-x64-msvc',
    onnx: 'win32/x64',
    koffi: '@koromix/koffi-win32-x64',
  },
};

export function vsixName(target) {
  return `kimina-prover-${target}.vsix`;
}

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

function pkgJson(dir) {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

const cache = join(root, '.kimina-cache', 'npm');

/** The version package-lock.json pins for a package (so a node_modules older than the lock still packages right). */
function locked(name) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const v = lock.packages?.[`node_modules/${name}`]?.version;
  if (!v) throw new Error(`package-lock.json pins no version of ${name}`);
  return v;
}

/** The folder of an npm package at a version: node_modules when it is there, else unpacked from a cached tarball. */
function packageDir(name, version) {
  const local = join(root, 'node_modules', name);
  if (existsSync(join(local, 'package.json')) && pkgJson(local).version === version) return local;
  mkdirSync(cache, { recursive: true });
  const tgz = join(cache, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  if (!existsSync(tgz)) {
    console.log(`package: fetching ${name}@${version} from npm`);
    run('npm', ['pack', `${name}@${version}`, '--pack-destination', cache, '--silent']);
    if (!existsSync(tgz)) throw new Error(`npm pack ${name}@${version} did not write ${tgz}`);
  }
  const dir = join(cache, 'unpacked', `${name.replace('/', '+')}@${version}`);
  if (!existsSync(join(dir, 'package.json'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    run('tar', ['-xzf', tgz, '-C', dir, '--strip-components=1']);
  }
  return dir;
}

function copy(from, to, filter = () => true) {
  cpSync(from, to, {
    recursive: true,
    filter: (src) => statSync(src).isDirectory() || filter(relative(from, src).replace(/\\/g, '/')),
  });
  pruneEmpty(to);
}

/** Removes the folders a filtered copy left empty. */
function pruneEmpty(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      pruneEmpty(p);
      if (readdirSync(p).length === 0) rmSync(p, { recursive: true });
    }
  }
}

/** Files kept from each staged package (what it needs at run time). */
const keep = {
  libsql: (f) => /^(package\.json|LICENSE|[\w-]+\.js)$/.test(f),
  '@neon-rs/load': (f) => f === 'package.json' || /^dist\/.*\.js$/.test(f) || f === 'LICENSE',
  '@resvg/resvg-js': (f) => /^(package\.json|LICENSE|[\w-]+\.js)$/.test(f),
  // dist/cjs/package.json says those files are CommonJS (the package itself is an ES module)
  koffi: (f) =>
    f === 'package.json' || f === 'LICENSE.txt' || /^(index|src\/koffi\/index|src\/koffi\/src\/static)\.cjs$/.test(f),
  'onnxruntime-common': (f) => f === 'package.json' || /^dist\/cjs\/(.*\.js|package\.json)$/.test(f) || f === 'LICENSE',
};

function stage(target, dir) {
  const t = TARGETS[target];
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rootPkg = pkgJson(root);
  const nm = join(dir, 'node_modules');
  const deps = {};
  const add = (name, version, filter) => {
    copy(packageDir(name, version), join(nm, name), filter);
    deps[name] = version;
  };
  const libsqlDir = packageDir('libsql', locked('libsql'));
  const libsqlPkg = pkgJson(libsqlDir);
  add('libsql', libsqlPkg.version, keep.libsql);
  // libsql pins its own detect-libc, installed under it
  copy(
    packageDir('detect-libc', locked('libsql/node_modules/detect-libc')),
    join(nm, 'libsql', 'node_modules', 'detect-libc'),
    (f) => /^(package\.json|LICENSE|lib\/[\w-]+\.js)$/.test(f),
  );
  add('@neon-rs/load', locked('@neon-rs/load'), keep['@neon-rs/load']);
  add(t.libsql, libsqlPkg.optionalDependencies[t.libsql], () => true);
  const resvgPkg = pkgJson(packageDir('@resvg/resvg-js', locked('@resvg/resvg-js')));
  add('@resvg/resvg-js', resvgPkg.version, keep['@resvg/resvg-js']);
  add(t.resvg, resvgPkg.optionalDependencies[t.resvg], () => true);
  if (t.onnx) {
    const ortPkg = pkgJson(packageDir('onnxruntime-node', locked('onnxruntime-node')));
    add('onnxruntime-common', ortPkg.dependencies['onnxruntime-common'], keep['onnxruntime-common']);
    add(
      'onnxruntime-node',
      ortPkg.version,
      (f) =>
        f === 'package.json' ||
        f === 'LICENSE' ||
        /^dist\/[\w.-]+\.js$/.test(f) ||
        f.startsWith(`bin/napi-v6/${t.onnx}/`),
    );
    // the install script and its downloaders do not ship: the binaries are already in the folder
    const staged = join(nm, 'onnxruntime-node', 'package.json');
    const j = pkgJson(join(nm, 'onnxruntime-node'));
    j.dependencies = { 'onnxruntime-common': j.dependencies['onnxruntime-common'] };
    delete j.scripts;
    writeFileSync(staged, JSON.stringify(j, null, 2));
  }
  if (t.koffi) {
    // koffi (the FFI of the C API path, backend/model/onnx/ortNative.ts): its CommonJS entry and this platform's
    // prebuilt binary package, which it requires by name; no install script (nothing is built on the user's machine)
    const koffiPkg = pkgJson(packageDir('koffi', locked('koffi')));
    add('koffi', koffiPkg.version, keep.koffi);
    add(t.koffi, koffiPkg.optionalDependencies[t.koffi], () => true);
    const staged = join(nm, 'koffi', 'package.json');
    const j = pkgJson(join(nm, 'koffi'));
    delete j.scripts;
    delete j.optionalDependencies;
    writeFileSync(staged, JSON.stringify(j, null, 2));
  }
  // the extension, the backend bundle, the webviews, icons, the built-in benchmark, the Python trainer sources
  for (const f of ['README.md', 'LICENSE']) cpSync(join(root, f), join(dir, f));
  // every bundle (cli, extension, its workers), without source maps
  copy(join(root, 'dist'), join(dir, 'dist'), (f) => /^[\w-]+\.js$|^media\/[\w-]+\.(js|css)$/.test(f));
  copy(join(root, 'media'), join(dir, 'media'), (f) => /^[\w-]+\.svg$/.test(f));
  // the agent instructions VS Code contributes to chat (contributes.chatInstructions)
  copy(join(root, 'agents'), join(dir, 'agents'), (f) => /^[\w.-]+\.md$/.test(f));
  copy(join(root, 'data', 'minif2f-lean4'), join(dir, 'data', 'minif2f-lean4'));
  copy(
    join(root, 'backend', 'trainer'),
    join(dir, 'backend', 'trainer'),
    (f) =>
      /^(requirements|constraints)-[\w.-]+\.txt$/.test(f) ||
      (/^(kimina_trainer|verl)\/.*\.py$/.test(f) && !/(^|\/)tests?\//.test(f) && !/__pycache__/.test(f)),
  );
  const manifest = { ...rootPkg, dependencies: deps };
  delete manifest.devDependencies;
  delete manifest.scripts;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, '.vscodeignore'), '# staged by scripts/package.mjs: everything here ships\n');
}

/** Stages every target, then runs vsce for all of them at once (most of a run is vsce's own start and checks). */
export async function packageTargets(targets, outDir, outFile) {
  const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  const jobs = targets.map((target) => {
    if (!TARGETS[target]) throw new Error(`unknown target ${target} (known: ${Object.keys(TARGETS).join(', ')})`);
    const dir = join(root, 'out', 'package', target);
    stage(target, dir);
    const out = resolve(outFile ?? join(outDir, vsixName(target)));
    mkdirSync(dirname(out), { recursive: true });
    return { target, dir, out };
  });
  const t0 = Date.now();
  await Promise.all(
    jobs.map(
      ({ target, dir, out }) =>
        new Promise((ok, fail) => {
          const args = [vsce, 'package', '--no-rewrite-relative-links', '--target', target, '--out', out];
          const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
          let text = '';
          child.stdout.on('data', (c) => (text += c));
          child.stderr.on('data', (c) => (text += c));
          child.on('error', fail);
          child.on('close', (code) => {
            if (code !== 0) return fail(new Error(`vsce package --target ${target} failed (${code}): ${text}`));
            rmSync(dir, { recursive: true, force: true }); // the staged copy (60 MB a target) is in the vsix now
            const mb = (statSync(out).size / 1e6).toFixed(1);
            console.log(
              `package: ${relative(process.cwd(), out)} (${mb} MB, ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
            );
            ok(out);
          });
        }),
    ),
  );
  return jobs.map((j) => j.out);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const targets = (arg('targets') ?? Object.keys(TARGETS).join(',')).split(',').filter(Boolean);
  const outFile = arg('out');
  if (outFile && targets.length !== 1) throw new Error('--out names one file: give one --targets');
  if (!process.argv.includes('--no-build'))
    run(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  await packageTargets(targets, resolve(arg('out-dir') ?? root), outFile);
}
