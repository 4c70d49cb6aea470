// The trainer environment's installer runs pip again when a run fails (a multi-GB download over a flaky network
// fails now and then) and gives up with pip's output after the last attempt. Real venv and pip, offline: the
// requirement comes from a local wheel folder that is empty on the first run and filled before the second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonEnv, requirementsHash } from '../../backend/training/pythonEnv';

/** A minimal pure-Python wheel of the module `module` 1.0 (default `kimina_retry_probe`) in `dir`. */
function writeProbeWheel(dir: string, module = 'kimina_retry_probe'): void {
  const script = [
    'import sys, zipfile',
    `name = "${module}-1.0"`,
    'files = {',
    `  "${module}.py": "VALUE = 42\\n",`,
    `  f"{name}.dist-info/METADATA": "Metadata-Version: 2.1\\nName: ${module.replace(/_/g, '-')}\\nVersion: 1.0\\n",`,
    '  f"{name}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",',
    '}',
    'record = "".join(f"{p},,\\n" for p in files) + f"{name}.dist-info/RECORD,,\\n"',
    'with zipfile.ZipFile(sys.argv[1] + f"/{name}-py3-none-any.whl", "w") as z:',
    '    for p, text in files.items(): z.writestr(p, text)',
    '    z.writestr(f"{name}.dist-info/RECORD", record)',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

function setup(): { dir: string; wheels: string; requirements: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-pyenv-'));
  const wheels = join(dir, 'wheels');
  mkdirSync(wheels);
  const requirements = join(dir, 'requirements.txt');
  writeFileSync(requirements, `--no-index\n--find-links ${wheels}\nkimina-retry-probe==1.0\n`);
  return { dir, wheels, requirements };
}

test('a failed pip run is retried, and the environment is complete after the retry', { timeout: 120_000 }, async () => {
  const { dir, wheels, requirements } = setup();
  try {
    const lines: string[] = [];
    const r = await ensurePythonEnv({
      env: process.env,
      dir: join(dir, 'venv'),
      requirements,
      verifyModules: ['kimina_retry_probe'],
      pipRetryDelayMs: 10,
      onProgress: (line) => {
        lines.push(line);
        if (line.startsWith('pip failed (attempt 1 of 3')) writeProbeWheel(wheels); // the "network" comes back
      },
    });
    assert.ok(r.created);
    assert.equal(r.versions.kimina_retry_probe, '?'); // imported (it has no __version__)
    assert.equal(lines.filter((l) => l.startsWith('pip failed')).length, 1, lines.join('\n'));
    assert.match(
      lines.find((l) => l.startsWith('pip failed')) ?? '',
      /No matching distribution found for kimina-retry-probe==1\.0/,
    );
    // the marker makes the next call return at once
    const again = await ensurePythonEnv({
      env: process.env,
      dir: join(dir, 'venv'),
      requirements,
      verifyModules: ['kimina_retry_probe'],
    });
    assert.equal(again.created, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'pip failing on every attempt gives up with its output and leaves no completion marker',
  { timeout: 120_000 },
  async () => {
    const { dir, requirements } = setup();
    try {
      const lines: string[] = [];
      await assert.rejects(
        ensurePythonEnv({
          env: process.env,
          dir: join(dir, 'venv'),
          requirements,
          verifyModules: [],
          pipAttempts: 2,
          pipRetryDelayMs: 10,
          onProgress: (l) => lines.push(l),
        }),
        /pip could not install the trainer requirements .* in 2 attempts; last output:\n[\s\S]*No matching distribution found for kimina-retry-probe==1\.0/,
      );
      assert.equal(lines.filter((l) => l.startsWith('pip failed')).length, 1);
      assert.ok(!existsSync(join(dir, 'venv', '.kimina-env.json')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a layered environment sees its base beneath its own packages, installs only what the base lacks, and follows a rebuilt base',
  { timeout: 180_000 },
  async () => {
    const { dir, wheels, requirements } = setup();
    try {
      writeProbeWheel(wheels);
      writeProbeWheel(wheels, 'kimina_layer_probe');
      const base = join(dir, 'base');
      await ensurePythonEnv({ env: process.env, dir: base, requirements, verifyModules: ['kimina_retry_probe'] });
      const layerRequirements = join(dir, 'layer.txt');
      writeFileSync(
        layerRequirements,
        `--no-index\n--find-links ${wheels}\nkimina-retry-probe==1.0\nkimina-layer-probe==1.0\n`,
      );
      const layer = join(dir, 'layer');
      const lines: string[] = [];
      const options = {
        env: process.env,
        dir: layer,
        requirements: layerRequirements,
        layeredOn: base,
        verifyModules: ['kimina_retry_probe', 'kimina_layer_probe'],
        onProgress: (l: string) => lines.push(l),
      };
      const r = await ensurePythonEnv(options);
      assert.ok(r.created);
      // the base's package is not installed a second time: the layer imports it from the base
      assert.ok(
        lines.some((l) => /Requirement already satisfied: kimina-retry-probe/.test(l)),
        lines.join('\n'),
      );
      const where = spawnSync(
        r.python,
        ['-c', 'import kimina_retry_probe as a, kimina_layer_probe as b; print(a.__file__); print(b.__file__)'],
        { encoding: 'utf8' },
      );
      const [fromBase, fromLayer] = where.stdout.trim().split('\n');
      assert.ok(fromBase.startsWith(base), fromBase);
      assert.ok(fromLayer.startsWith(layer), fromLayer);
      assert.equal((await ensurePythonEnv(options)).created, false);
      // a rebuilt base (new requirements hash) rebuilds the layer
      writeFileSync(requirements, readFileSync(requirements, 'utf8') + '# edited\n');
      await ensurePythonEnv({ env: process.env, dir: base, requirements, verifyModules: ['kimina_retry_probe'] });
      assert.equal((await ensurePythonEnv(options)).created, true);
      // a base that is not complete is refused before anything is made
      await assert.rejects(
        ensurePythonEnv({ ...options, dir: join(dir, 'layer2'), layeredOn: join(dir, 'missing') }),
        /is not complete: create it first/,
      );
      assert.ok(!existsSync(join(dir, 'layer2')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('each trainer requirements file names a constraints file that pins every package, agreeing with its own pins', () => {
  const trainer = join(__dirname, '..', '..', 'backend', 'trainer');
  const pins = (text: string) =>
    new Map(
      [...text.matchAll(/^([A-Za-z0-9_.-]+)==(\S+)/gm)].map((m) => [m[1].toLowerCase().replace(/[-_.]+/g, '-'), m[2]]),
    );
  for (const kind of ['cpu', 'gpu', 'verl', 'verl-0.9']) {
    const requirements = join(trainer, `requirements-${kind}.txt`);
    const text = readFileSync(requirements, 'utf8');
    assert.match(text, new RegExp(`^-c constraints-${kind}\\.txt$`, 'm'), kind);
    const constraints = pins(readFileSync(join(trainer, `constraints-${kind}.txt`), 'utf8'));
    assert.ok(constraints.size > 50, `${kind}: ${constraints.size} constraints`);
    for (const [name, version] of pins(text)) assert.equal(constraints.get(name), version, `${kind}: ${name}`);
  }
});

test('the requirements hash covers the files a requirements file names (-r, -c), so editing the pins reinstalls', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-pyenv-hash-'));
  try {
    const requirements = join(dir, 'requirements.txt');
    writeFileSync(requirements, 'torch==2.15.0\n-c constraints.txt\n');
    writeFileSync(join(dir, 'constraints.txt'), 'numpy==2.4.6\n');
    const before = requirementsHash(requirements);
    writeFileSync(join(dir, 'constraints.txt'), 'numpy==2.4.7\n');
    assert.notEqual(requirementsHash(requirements), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
