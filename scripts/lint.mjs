// `npm run lint`: the linters of both languages, side by side. TypeScript: Biome (biome.jsonc, the architecture
// rules a linter can say among them) and knip (knip.jsonc: no unused file, export or dependency). Python, the
// trainer: ruff (backend/trainer/ruff.toml) and pyright (backend/trainer/pyrightconfig.json). ruff is installed
// from PyPI into .venv-lint/ on first use (pinned in backend/trainer/requirements-lint.txt; seconds). Exits non-zero
// if any finds something.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const venv = join(root, '.venv-lint');
const venvBin = (name) => join(venv, process.platform === 'win32' ? 'Scripts' : 'bin', name);
const requirements = join(root, 'backend', 'trainer', 'requirements-lint.txt');

/** .venv-lint with the pinned ruff, made or updated when the pins changed. */
function pythonLinters() {
  const stamp = join(venv, 'requirements-lint.txt');
  const wanted = readFileSync(requirements, 'utf8');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return;
  const python = process.env.PYTHON ?? (process.platform === 'win32' ? 'python' : 'python3');
  for (const cmd of [
    [python, ['-m', 'venv', venv]],
    [venvBin('python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements]],
  ]) {
    const r = spawnSync(cmd[0], cmd[1], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`lint: ${cmd[0]} ${cmd[1].join(' ')} failed`);
  }
  writeFileSync(stamp, wanted);
}

/** Runs one linter, its output kept until it ends so that the linters running together do not interleave. */
function run(name, cmd, args, cwd = root) {
  const t0 = Date.now();
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (err) => done({ name, ok: false, out: String(err), s: 0 }));
    child.on('close', (code) => done({ name, ok: code === 0, out, s: (Date.now() - t0) / 1000 }));
  });
}

pythonLinters();
const trainer = join(root, 'backend', 'trainer');
const results = await Promise.all([
  run('biome', bin('biome'), ['lint', '--error-on-warnings', '--max-diagnostics=50']),
  run('knip', bin('knip'), ['--no-progress']),
  run('ruff', venvBin('ruff'), ['check', '--no-cache', '.'], trainer),
  run('pyright', bin('pyright'), ['-p', 'pyrightconfig.json'], trainer),
]);
for (const r of results) {
  if (!r.ok) process.stdout.write(r.out);
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${r.s.toFixed(1)} s)`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
