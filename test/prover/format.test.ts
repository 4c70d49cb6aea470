import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkAnswer,
  checkConversation,
  intersectionOverFinal,
  parseTacticBlocks,
  significantThinkingLines,
} from '../../backend/prover/format';
import { REPEATED_SENTENCE, STATEMENT, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const check = (response: string) => checkAnswer(response, STATEMENT).error;
const replaceOnce = (s: string, from: string, to: string) => {
  assert.ok(s.includes(from), `fixture lacks ${JSON.stringify(from)}`);
  return s.replace(from, to);
};

test('§8.1 well-formed output passes every check and yields the final code', () => {
  const r = checkAnswer(WELL_FORMED, STATEMENT);
  assert.equal(r.error, 'NONE');
  assert.equal(r.ok, true);
  assert.equal(r.message, 'No error.');
  assert.equal(
    r.finalCode,
    'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  have h₁ : 2 * x = 8 := by linarith\n  linarith',
  );
});

test('§8.2: first tactics fence written as lean4 fails check 1', () => {
  assert.equal(check(replaceOnce(WELL_FORMED, '```tactics', '```lean4')), 'NO_VALID_LEAN4_CODE_BLOCK');
});

test('§8.2: prose after the final fence fails check 1', () => {
  assert.equal(check(WELL_FORMED + '\nDone.'), 'NO_VALID_LEAN4_CODE_BLOCK');
  assert.equal(check(WELL_FORMED + '\n\n  \n'), 'NONE', 'trailing whitespace is allowed');
});

test('§8.2: opening <think> removed fails check 2', () => {
  assert.equal(check(replaceOnce(WELL_FORMED, '<think>\n', '')), 'NO_VALID_THINK_BLOCK');
});

test('check 2: two think blocks, a stray </think>, or no closing tag', () => {
  assert.equal(
    check(replaceOnce(WELL_FORMED, '</think>', '</think>\n<think>again</think>')),
    'INVALID_THINK_BLOCK_COUNT',
  );
  assert.equal(check(replaceOnce(WELL_FORMED, '</think>', '</think></think>')), 'INVALID_THINK_BLOCK_COUNT');
  assert.equal(check(replaceOnce(WELL_FORMED, '</think>', '')), 'INVALID_THINK_BLOCK_COUNT');
  assert.equal(check('Preamble text is ignored.\n' + WELL_FORMED), 'NONE');
});

test('check 3: a final block without a newline before the closing fence', () => {
  const bad = WELL_FORMED.replace(/linarith\n```$/, 'linarith ```');
  assert.notEqual(bad, WELL_FORMED);
  assert.equal(check(bad), 'INVALID_LEAN4_CODE_BLOCK_COUNT');
});

test('§8.2: a line with 11 content words repeated 6 times fails check 4; 5 times passes', () => {
  const withRepeats = (n: number) =>
    replaceOnce(WELL_FORMED, 'With h₁ available', `${(REPEATED_SENTENCE + '\n').repeat(n)}With h₁ available`);
  assert.equal(check(withRepeats(6)), 'GENERATION_REPEATS');
  assert.equal(check(withRepeats(5)), 'NONE');
});

test('check 4 counts Unicode word tokens like Python and skips stop words', () => {
  // 10 content tokens once h₀, ℝ and x₁ count as one word each.
  assert.deepEqual(significantThinkingLines('value h₀ over ℝ gives x₁ bound strictly positive real number here'), [
    'value h₀ over ℝ gives x₁ bound strictly positive real number here',
  ]);
  // Stop words do not count: 9 content words plus stop words stays below the bar.
  assert.deepEqual(significantThinkingLines('the value of h₀ over ℝ gives x₁ then a bound strictly positive'), []);
  assert.equal(
    significantThinkingLines('the value of h₀ over ℝ gives x₁ then a bound strictly positive real').length,
    1,
  );
  // Lines inside tactics blocks are removed before counting.
  const inBlock = '```tactics\n' + (REPEATED_SENTENCE + '\n').repeat(7) + '```';
  assert.deepEqual(significantThinkingLines(inBlock), []);
});

test('§8.2: second tactics block removed fails check 5', () => {
  const start = WELL_FORMED.indexOf('With h₁ available');
  const end = WELL_FORMED.indexOf('</think>');
  assert.equal(check(WELL_FORMED.slice(0, start) + WELL_FORMED.slice(end)), 'INSUFFICIENT_TACTICS_BLOCKS');
});

test('check 6: a tactics block longer than max(5, ⌊0.95·L⌋) lines', () => {
  const longBlock =
    '```tactics\n' + Array.from({ length: 6 }, (_, i) => `  have h${i} : True := trivial`).join('\n') + '\n```';
  assert.equal(
    check(replaceOnce(WELL_FORMED, 'With h₁ available', `${longBlock}\nWith h₁ available`)),
    'TACTIC_CODE_TOO_MANY_LINES',
  );
  const fiveLines = '```tactics\n' + Array.from({ length: 5 }, () => '  linarith').join('\n') + '\n```';
  assert.equal(check(replaceOnce(WELL_FORMED, 'With h₁ available', `${fiveLines}\nWith h₁ available`)), 'NONE');
});

test('check 7a: a fence the line parser sees but the strict regex does not is a formatting error', () => {
  // A fence line with trailing spaces opens a block for the line parser only; it swallows the next fence.
  const bad = replaceOnce(WELL_FORMED, 'Start from the statement', '```tactics   \nlinarith\nStart from the statement');
  assert.equal(check(bad), 'TACTIC_BLOCK_FORMATTING_ERROR');
  assert.equal(parseTacticBlocks('```tactics\nlinarith\n'), null);
  assert.deepEqual(parseTacticBlocks('  ```tactics  \nsimp\n  ```\n'), ['simp']);
});

test('§8.2: theorem line removed from the first tactics block fails check 7b (score 2/4)', () => {
  const bad = replaceOnce(
    WELL_FORMED,
    '```tactics\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n',
    '```tactics\n',
  );
  assert.equal(check(bad), 'TACTICS_LEAN4_NOT_MATCH');
  assert.equal(
    intersectionOverFinal(
      ['  have h₁ : 2 * x = 8 := by linarith', 'have h₁ : 2 * x = 8 := by linarith\nlinarith'],
      'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  have h₁ : 2 * x = 8 := by linarith\n  linarith',
    ),
    0.5,
  );
});

test('§8.2: conclusion changed in the final block only fails check 7b', () => {
  const i = WELL_FORMED.lastIndexOf(': x = 4 := by');
  const bad = WELL_FORMED.slice(0, i) + ': x ≤ 4 := by' + WELL_FORMED.slice(i + ': x = 4 := by'.length);
  assert.equal(check(bad), 'TACTICS_LEAN4_NOT_MATCH');
});

test('§8.2: axiom added to the final block fails 7b; covered by the tactics it fails check 8', () => {
  const addAxiom = (s: string) =>
    s.replace(/```lean4\nimport Mathlib\n/, '```lean4\nimport Mathlib\naxiom cheat : False\n');
  assert.equal(check(addAxiom(WELL_FORMED)), 'TACTICS_LEAN4_NOT_MATCH');
  const covered = replaceOnce(addAxiom(WELL_FORMED), '```tactics\ntheorem', '```tactics\naxiom cheat : False\ntheorem');
  assert.equal(check(covered), 'LEAN4_CODE_NOT_START_WITH_STATEMENT');
});

test('check 8: a weakened statement everywhere is rejected; comments and sorry in the statement do not matter', () => {
  const weakened = WELL_FORMED.replaceAll(': x = 4 := by', ': x ≤ 4 := by');
  assert.equal(check(weakened), 'LEAN4_CODE_NOT_START_WITH_STATEMENT');
  const commented =
    'import Mathlib\n\n/-- the informal text -/\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by sorry';
  assert.equal(checkAnswer(WELL_FORMED, commented).error, 'NONE');
});

test('trailing comment lines are stripped from the final code', () => {
  const r = checkAnswer(WELL_FORMED.replace(/linarith\n```$/, 'linarith\n  -- done\n```'), STATEMENT);
  assert.equal(r.error, 'NONE');
  assert.ok(r.finalCode?.endsWith('  linarith'));
});

test('a realistic long answer (many paragraphs and tactic blocks) passes; a looping one fails', () => {
  const paragraphs: string[] = [];
  for (let i = 0; i < 40; i++) {
    paragraphs.push(
      `Step ${i}: consider the quantity 2 * x + ${i}, compare it with ${11 + i} and record what linarith would need at stage ${i}.`,
    );
    paragraphs.push('```tactics\n  have h₁ : 2 * x = 8 := by linarith\n```');
  }
  const long = replaceOnce(WELL_FORMED, 'With h₁ available', paragraphs.join('\n\n') + '\n\nWith h₁ available');
  assert.ok(long.length > 5000);
  assert.equal(check(long), 'NONE');
  const looping = replaceOnce(
    WELL_FORMED,
    'With h₁ available',
    Array.from(
      { length: 30 },
      () => 'Let me reconsider whether subtracting three from both sides really gives eight on the left side.',
    ).join('\n') + '\nWith h₁ available',
  );
  assert.equal(check(looping), 'GENERATION_REPEATS');
});

test('multi-turn: every assistant turn is checked and the first failure wins', () => {
  const convo = (first: string, second: string) => [
    { role: 'system' as const, content: 'sys' },
    { role: 'user' as const, content: 'prompt' },
    { role: 'assistant' as const, content: first },
    { role: 'user' as const, content: 'feedback' },
    { role: 'assistant' as const, content: second },
  ];
  assert.equal(checkConversation(convo(WELL_FORMED, WELL_FORMED), STATEMENT).error, 'NONE');
  assert.equal(
    checkConversation(convo(WELL_FORMED + '\nDone.', WELL_FORMED), STATEMENT).error,
    'NO_VALID_LEAN4_CODE_BLOCK',
  );
  assert.equal(
    checkConversation(convo(WELL_FORMED, WELL_FORMED.replace('<think>\n', '')), STATEMENT).error,
    'NO_VALID_THINK_BLOCK',
  );
  assert.throws(() => checkConversation([{ role: 'user', content: 'x' }], STATEMENT), /no assistant message/);
});
