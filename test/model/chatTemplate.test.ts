import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatTemplateOf, compileChatTemplate } from '../../backend/model/chatTemplate';
import { tokenizerFromFiles } from '../../backend/model/tokenizer';
import type { ChatMessage } from '../../backend/protocol';
import { qwen3Tokenizer, reference } from './qwen3Fixture';

const SYSTEM = 'You are an expert in mathematics and proving theorems in Lean 4.';
const STATEMENT = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by';
const USER =
  'Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\nSolve 2x + 3 = 11.\n\n' +
  '# Formal Statement:\n```lean4\n' +
  STATEMENT +
  '\n```\n';

test('Qwen3 template: the first-turn prompt is exactly the one of kimina-format.md §1.3', async () => {
  const template = chatTemplateOf(await qwen3Tokenizer(), 'Qwen3');
  const text = await template.render([
    { role: 'system', content: SYSTEM },
    { role: 'user', content: USER },
  ]);
  const expected =
    '<|im_start|>system\nYou are an expert in mathematics and proving theorems in Lean 4.<|im_end|>\n' +
    '<|im_start|>user\nThink about and solve the following problems step by step in Lean 4.\n\n# Problem:\nSolve 2x + 3 = 11.\n\n' +
    '# Formal Statement:\n```lean4\nimport Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n```\n' +
    '<|im_end|>\n<|im_start|>assistant\n';
  assert.equal(text, expected);
  assert.ok(!text.includes('<think>'), 'thinking stays on: no pre-filled empty think block');
});

test('Qwen3 template: renders equal Python jinja2 (as transformers runs it) for both turns', async () => {
  const tok = await qwen3Tokenizer();
  const template = chatTemplateOf(tok, 'Qwen3');
  assert.equal(reference.renders.length, 2);
  for (const r of reference.renders) {
    const text = await template.render(r.messages);
    assert.equal(text, r.text);
    assert.deepEqual(tok.encode(text), r.ids);
  }
});

test("Qwen3 template: the fix turn drops the earlier answer's think part (§6.5)", async () => {
  const template = chatTemplateOf(await qwen3Tokenizer(), 'Qwen3');
  const answer =
    '<think>\nSECRET reasoning.\n\n```tactics\n  linarith\n```\n</think>\nShort summary.\n\n```lean4\n' +
    STATEMENT +
    '\n  linarith\n```';
  const conversation: ChatMessage[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: USER },
    { role: 'assistant', content: answer },
    { role: 'user', content: '# Error 1:\nError message: \nlinarith failed\n' },
  ];
  const text = await template.render(conversation);
  assert.ok(!text.includes('SECRET') && !text.includes('<think>'));
  assert.ok(text.includes('<|im_start|>assistant\nShort summary.\n\n```lean4\n'));
  assert.ok(text.endsWith('linarith failed\n<|im_end|>\n<|im_start|>assistant\n'));
  // A closing assistant turn (no later user message) keeps its reasoning.
  const last = await template.render(conversation.slice(0, 3), { addGenerationPrompt: false });
  assert.ok(last.includes('<|im_start|>assistant\n<think>\nSECRET reasoning.'));
  assert.ok(last.endsWith('```<|im_end|>\n'));
});

test('bad conversations and broken templates fail with clear errors', async () => {
  const template = chatTemplateOf(await qwen3Tokenizer(), 'Qwen3');
  await assert.rejects(() => template.render([]), /empty conversation/);
  await assert.rejects(
    () => template.render([{ role: 'tool', content: 'x' } as unknown as ChatMessage]),
    /message 0: role must be/,
  );
  await assert.rejects(
    () => template.render([{ role: 'user', content: 7 } as unknown as ChatMessage]),
    /content must be a string/,
  );
  assert.throws(() => compileChatTemplate('{% for %}', {}, 'chat template of m'), /chat template of m: cannot parse/);
  const raising = compileChatTemplate("{{ raise_exception('only user turns') }}", {}, 'chat template of m');
  await assert.rejects(
    () => raising.render([{ role: 'user', content: 'x' }]),
    /chat template of m: rendering failed: .*only user turns/,
  );
  const bare = tokenizerFromFiles({ tokenizerJson: { model: { type: 'BPE', vocab: { a: 0 }, merges: [] } } });
  assert.throws(() => chatTemplateOf(bare, 'tiny'), /tiny has no chat template/);
});

test('special tokens from the tokenizer config reach the template', async () => {
  const tok = tokenizerFromFiles({
    tokenizerJson: {
      model: { type: 'BPE', vocab: { a: 0 }, merges: [] },
      added_tokens: [{ id: 1, content: '</s>', special: true }],
    },
    tokenizerConfig: {
      eos_token: '</s>',
      chat_template:
        '{% for m in messages %}{{ m.content + eos_token }}{% endfor %}{% if add_generation_prompt %}>{% endif %}',
    },
  });
  assert.equal(await chatTemplateOf(tok).render([{ role: 'user', content: 'hi' }]), 'hi</s>>');
});

test("Python string methods: strip/lstrip/rstrip keep their argument (the fix turn keeps the answer's leading spaces)", async () => {
  const template = chatTemplateOf(await qwen3Tokenizer(), 'Qwen3');
  // The earlier answer's text after </think> starts with "\n" then spaces: Python's lstrip('\n')
  // removes only the newline (the library's own lstrip removed the spaces too).
  const answer = '<think>\nreasoning\n</think>\n   Indented summary.\n```lean4\n  linarith\n```\n';
  const text = await template.render([
    { role: 'user', content: 'prove it' },
    { role: 'assistant', content: answer },
    { role: 'user', content: '# Error 1:\nlinarith failed' },
  ]);
  assert.equal(
    text,
    '<|im_start|>user\nprove it<|im_end|>\n<|im_start|>assistant\n   Indented summary.\n```lean4\n  linarith\n```\n<|im_end|>\n' +
      '<|im_start|>user\n# Error 1:\nlinarith failed<|im_end|>\n<|im_start|>assistant\n',
  );
  const probe = compileChatTemplate(
    "[{{ x.lstrip('\\n') }}|{{ x.strip() }}|{{ x.rstrip(' \\n') }}|{{ x|trim }}|{{ x|trim('\\n ') }}|{{ x.strip('') }}]",
    { x: '\n\n  hi \x1c\n' },
  );
  // Python: '\x1c' is whitespace for str.strip(); the explicit character sets are honoured.
  assert.equal(
    await probe.render([{ role: 'user', content: '' }]),
    '[  hi \x1c\n|hi|\n\n  hi \x1c|hi|hi \x1c|\n\n  hi \x1c\n]',
  );
  assert.equal(
    await compileChatTemplate('[{{ x.strip() }}]', { x: '\ufeffa\u3000' }).render([{ role: 'user', content: '' }]),
    '[\ufeffa]',
  );
});

// Issue 29, finding 6: a checkpoint's template is its code; it renders in a worker with a time, heap and size
// limit, and a template that loops fails with an error naming it while this process goes on.
test(
  'a template that loops or allocates without end is stopped with an error naming it; the next render works',
  { timeout: 60_000 },
  async () => {
    const limits = { timeMs: 1500, heapMb: 64, maxChars: 1024 * 1024 };
    const huge = compileChatTemplate(
      '{% for i in range(100000000) %}x{% endfor %}',
      {},
      'chat template of Huge',
      limits,
    );
    await assert.rejects(
      () => huge.render([{ role: 'user', content: 'x' }]),
      /chat template of Huge: (rendering stopped|rendering failed)/,
    );
    const nested = compileChatTemplate(
      '{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}{% endfor %}{% endfor %}{% endfor %}',
      {},
      'chat template of Nested',
      limits,
    );
    const started = Date.now();
    await assert.rejects(
      () => nested.render([{ role: 'user', content: 'x' }]),
      /chat template of Nested: rendering stopped after 1\.5 s/,
    );
    assert.ok(Date.now() - started < 10_000, 'stopped at its time limit');
    const long = compileChatTemplate(
      `{% for i in range(20000) %}${'x'.repeat(100)}{% endfor %}`,
      {},
      'chat template of Long',
      limits,
    );
    await assert.rejects(
      () => long.render([{ role: 'user', content: 'x' }]),
      /chat template of Long: rendering failed: the rendered prompt passed 1048576 characters/,
    );
    const fine = compileChatTemplate(
      '{% for m in messages %}{{ m.content }}{% endfor %}',
      {},
      'chat template of Fine',
      limits,
    );
    assert.equal(await fine.render([{ role: 'user', content: 'still here' }]), 'still here');
  },
);
