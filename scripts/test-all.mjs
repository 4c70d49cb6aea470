// The README's test command: typecheck, build, then every suite in turn. Exits non-zero if any step fails.
import { spawnSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';

/** Free disk where the checkout and the temporary folder are, in GB: a run peaks at about 12 GB (the trainer's torch). */
function freeDisk() {
  const gb = (path) => {
    const s = statfsSync(path);
    return ((s.bavail * s.bsize) / 1e9).toFixed(1);
  };
  return `disk free: ${gb('.')} GB here, ${gb(tmpdir())} GB in ${tmpdir()}`;
}

const steps = [
  ['typecheck', ['npm', 'run', '-s', 'typecheck']],
  ['format', ['npm', 'run', '-s', 'format:check']],
  ['lint', ['npm', 'run', '-s', 'lint']],
  ['build', ['npm', 'run', '-s', 'build']],
  // the trainer suite first: it creates test/trainer/.venv, which the unit suite's transformers parity tests use
  ['trainer', ['npm', 'run', '-s', 'test:trainer']],
  ['unit', ['npm', 'run', '-s', 'test:unit']],
  ['e2e', ['npm', 'run', '-s', 'test:e2e']],
];
const only = process.env.KIMINA_TEST_ONLY?.split(',');
const results = [];
for (const [name, cmd] of steps) {
  if (only && !only.includes(name)) continue;
  const t0 = Date.now();
  console.log(`\n=== ${name}: ${cmd.join(' ')} (${freeDisk()})`);
  const r = spawnSync(cmd[0], cmd.slice(1), { stdio: 'inherit' });
  results.push({ name, ok: r.status === 0, s: ((Date.now() - t0) / 1000).toFixed(0) });
}
console.log('\n=== summary');
for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${r.s} s)`);
console.log(freeDisk());
process.exit(results.every((r) => r.ok) ? 0 : 1);
