import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ThinkSplitter, splitThink } from '../../backend/prover/thinkStream';
import { WELL_FORMED } from '../../backend/demo/kiminaExamples';

function streamed(text: string, size: number) {
  const s = new ThinkSplitter();
  let think = '',
    out = '';
  for (let i = 0; i < text.length; i += size) {
    const d = s.push(text.slice(i, i + size));
    think += d.think;
    out += d.text;
  }
  const d = s.flush();
  return { think: think + d.think, text: out + d.text };
}

test('any chunking gives the same split as the whole text, tags removed', () => {
  const whole = splitThink(WELL_FORMED);
  assert.ok(whole.think.startsWith('\nThe hypothesis') && whole.think.endsWith('```\n'));
  assert.ok(whole.text.startsWith('\nIsolate 2x'));
  for (const size of [1, 2, 3, 5, 8, 13, 1000]) assert.deepEqual(streamed(WELL_FORMED, size), whole, `chunk ${size}`);
});

test('no think tag: everything is text; unclosed think: everything is thinking', () => {
  assert.deepEqual(splitThink('just an answer'), { think: '', text: 'just an answer' });
  assert.deepEqual(streamed('<think>still going', 2), { think: 'still going', text: '' });
  assert.deepEqual(streamed('<thi', 1), { think: '', text: '<thi' });
  assert.deepEqual(streamed('  <think>a</think>b', 1), { think: 'a', text: 'b' });
});
