// Opt-in: the real kimina-client (Python, PyPI) against our server with stand-in REPLs (test double).
// Runs when KIMINA_CLIENT_PYTHON is a Python that can `import kimina_client`; else skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer } from './apiServer';

const python = process.env.KIMINA_CLIENT_PYTHON;
const skip = !python
  ? 'set KIMINA_CLIENT_PYTHON to a python with kimina-client installed to run this'
  : spawnSync(python, [
        '-c',
        'import typing, typing_extensions; typing.TypedDict = typing_extensions.TypedDict; import kimina_client',
      ]).status !== 0
    ? `${python} cannot import kimina_client`
    : undefined;

test('kimina-client check() and analyze() see our strict verdict', { skip }, async () => {
  const srv = await startTestServer({ maxRepls: 2, token: 'tok' });
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(python as string, [join(__dirname, 'kimina_client_check.py'), srv.url, 'tok']);
      let text = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => {
        text += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(err))));
    });
    assert.deepEqual(out.trim().split('\n'), [
      'admit sorry',
      'axiom lean_error',
      'error lean_error',
      'hang timeout_error',
      'honest valid',
      'native lean_error',
      'sorry sorry',
    ]);
  } finally {
    await srv.stop();
  }
});
