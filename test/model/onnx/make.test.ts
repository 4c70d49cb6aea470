// The model generator CLI other suites use: node --import tsx backend/demo/models/make.ts <kind> <dir>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readModelFolder } from '../../../backend/model/onnx/modelFolder';
import { makeModel, MODEL_KINDS } from '../../../backend/demo/models/make';
import { tempDir } from './helpers';

const make = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'backend/demo/models/make.ts', ...args], { encoding: 'utf8' });

test('make.ts writes a model folder from the command line and prints its path', () => {
  const dir = join(tempDir(), 'scripted');
  const r = make('scripted', dir);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), dir);
  assert.ok(existsSync(join(dir, 'onnx/model.onnx')));
});

test('every kind makes a complete model folder', () => {
  for (const kind of MODEL_KINDS) {
    const dir = join(tempDir(), kind);
    makeModel(kind, dir);
    for (const f of [
      'config.json',
      'generation_config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'onnx/model.onnx',
      'onnx/model.onnx_data',
    ]) {
      assert.ok(existsSync(join(dir, f)), `${kind}: ${f}`);
    }
    assert.equal(readModelFolder(dir).shape.layers, kind.startsWith('scripted') ? 1 : 2);
  }
});

test('make.ts with a wrong kind prints its usage and exits 2', () => {
  const r = make('huge', tempDir());
  assert.equal(r.status, 2);
  assert.match(r.stderr, /usage: .*make.ts <scripted\|scripted-direct\|tiny\|tiny-q4> <dir>/);
});
