import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SETTINGS, parseProveRequest, settingsOf } from '../../backend/prover/request';

test('parseProveRequest keeps given fields only and settingsOf fills the recipe defaults', () => {
  const req = parseProveRequest({ code: 'theorem t : True := by sorry', samples: 8, temperature: 0, informal: null });
  assert.deepEqual(req, { code: 'theorem t : True := by sorry', samples: 8, temperature: 0 });
  assert.deepEqual(settingsOf(req), { ...DEFAULT_SETTINGS, samples: 8, temperature: 0 });
  assert.deepEqual(DEFAULT_SETTINGS, { samples: 4, fixTurns: 1, temperature: 1, topP: 0.95, maxTokens: 24576 });
});

test('limits are enforced with the field named', () => {
  assert.throws(
    () => parseProveRequest({ code: 'x', samples: 65 }),
    /'samples' must be at least 1 and at most 64, got 65/,
  );
  assert.throws(() => parseProveRequest({ code: 'x', fixTurns: -1 }), /'fixTurns'/);
  assert.throws(() => parseProveRequest({ code: 'x', maxTokens: Infinity }), /'maxTokens' must be a number/);
  assert.throws(() => parseProveRequest({ code: 'x'.repeat(1_000_001) }), /longer than/);
  assert.throws(() => parseProveRequest('text'), /JSON object/);
  assert.throws(() => parseProveRequest({ code: 'x', theorem: 3 }), /'theorem' must be a string/);
});
