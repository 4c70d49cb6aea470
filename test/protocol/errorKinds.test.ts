// The error kinds (backend/protocol/errors.ts): what a failure lacks, read from an error's own `kind`, from the
// `data` of a ResponseError that crossed the LSP boundary, or from an HTTP error answer's body; nothing else counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorKindOf, errorKinds } from '../../backend/protocol';
import { ModelNotAvailable } from '../../backend/model/modelStore';
import { LeanNotAvailable } from '../../backend/lean/lake';
import { TrainerMissing } from '../../backend/training/paths';
import { HubUnreachable } from '../../backend/model/hub';

test('each setup error carries its kind; the kinds are the declared ones', () => {
  assert.equal(errorKindOf(new ModelNotAvailable('x')), 'model-missing');
  assert.equal(errorKindOf(new LeanNotAvailable('x')), 'lean-missing');
  assert.equal(errorKindOf(new TrainerMissing('x')), 'trainer-missing');
  assert.deepEqual([...errorKinds].sort(), ['lean-missing', 'model-missing', 'trainer-missing']);
});

test("the kind is read from a ResponseError's data and an HTTP answer's body", () => {
  assert.equal(
    errorKindOf({ message: 'Request kimina/prove failed', data: { kind: 'model-missing' } }),
    'model-missing',
  );
  assert.equal(errorKindOf({ detail: 'x does not exist', kind: 'trainer-missing' }), 'trainer-missing');
});

test('no kind from the words, from an unknown kind, or from anything not an object', () => {
  assert.equal(errorKindOf(new Error('no model available: run `kimina model pull`')), undefined);
  assert.equal(errorKindOf(new HubUnreachable('cannot reach huggingface.co')), undefined);
  assert.equal(errorKindOf({ kind: 'json_invalid' }), undefined);
  assert.equal(errorKindOf({ data: { kind: 'no-such-kind' } }), undefined);
  for (const v of [undefined, null, 'model-missing', 3]) assert.equal(errorKindOf(v), undefined);
});
