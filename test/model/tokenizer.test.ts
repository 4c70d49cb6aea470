import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTokenizer, tokenizerFromFiles, translateRegex } from '../../backend/model/tokenizer';
import { chatTemplateOf } from '../../backend/model/chatTemplate';
import { qwen3Tokenizer, reference } from './qwen3Fixture';

test('Qwen3: ids equal Hugging Face tokenizers on every reference text', async () => {
  const tok = await qwen3Tokenizer();
  assert.ok(reference.encodings.length >= 170);
  for (const { text, ids } of [...reference.encodings, ...reference.renders]) {
    assert.deepEqual(tok.encode(text), ids, `encoding of ${JSON.stringify(text.slice(0, 60))}`);
  }
});

test('Qwen3: known ids for chat and think tokens, each a single token', async () => {
  const tok = await qwen3Tokenizer();
  assert.deepEqual(tok.encode('<|im_start|>'), [151644]);
  assert.deepEqual(tok.encode('<|im_end|>'), [151645]);
  assert.deepEqual(tok.encode('<think>'), [151667]);
  assert.deepEqual(tok.encode('</think>'), [151668]);
  assert.deepEqual(
    tok.encode('<think>\nok\n</think>').filter((id) => id >= 151667),
    [151667, 151668],
  );
  assert.equal(tok.isSpecial(151645), true);
  assert.equal(tok.isSpecial(151667), false, '<think> is a non-special added token in Qwen3');
  assert.ok(tok.eosTokenIds.includes(151645));
  assert.equal(tok.padTokenId, 151643);
  assert.equal(tok.vocabSize, 151669);
  assert.equal(tok.tokenToId('<think>'), 151667);
  assert.equal(tok.idToToken(151668), '</think>');
});

test('Qwen3: added tokens can be read as plain text when asked', async () => {
  const tok = await qwen3Tokenizer();
  const ids = tok.encode('<think>', { addedTokens: false });
  assert.ok(ids.length > 1 && !ids.includes(151667));
  assert.equal(tok.decode(ids), '<think>');
});

test('Qwen3: Lean text with unicode round-trips', async () => {
  const tok = await qwen3Tokenizer();
  const lean = 'theorem t (x : ℝ) (h₀ : 0 < x) (S : Finset 𝔽) : ⊢ x ≠ 0 ∧ ∀ ε > 0, ∃ δ, δ < ε := by\n  nlinarith [h₀]';
  assert.equal(tok.decode(tok.encode(lean)), lean);
  assert.equal(tok.decode(tok.encode('\ufeffx')), '\ufeffx', 'a leading BOM is text, not a marker to drop');
  for (const { text, ids } of reference.encodings) assert.equal(tok.decode(ids), text.normalize('NFC'));
});

test('Qwen3: decode can skip special tokens but keeps the think tags', async () => {
  const tok = await qwen3Tokenizer();
  const ids = tok.encode('<think>\nx\n</think>\nanswer<|im_end|>');
  assert.equal(tok.decode(ids, { skipSpecialTokens: true }), '<think>\nx\n</think>\nanswer');
  assert.equal(tok.decode(ids), '<think>\nx\n</think>\nanswer<|im_end|>');
});

test('Qwen3: the stream decoder never emits half a character', async () => {
  const tok = await qwen3Tokenizer();
  const text = '𝔽 🙂👍🏽 中文字符 h₀ ⊢ ℝ done';
  const ids = tok.encode(text);
  const stream = tok.streamDecoder();
  const pieces = ids.map((id) => stream.push(id));
  pieces.push(stream.flush());
  assert.ok(
    pieces.some((p) => p === ''),
    'some token ends inside a character (the test would be vacuous otherwise)',
  );
  for (const p of pieces) assert.ok(!p.includes('\ufffd'), `piece ${JSON.stringify(p)} holds a broken character`);
  assert.equal(pieces.join(''), text);
});

test('stream decoder flush turns a truncated character into U+FFFD', async () => {
  const tok = await qwen3Tokenizer();
  const ids = tok.encode('\u{20000}');
  assert.ok(ids.length > 1, 'a rare CJK character takes several byte tokens');
  const stream = tok.streamDecoder();
  assert.equal(stream.push(ids[0]), '');
  assert.equal(stream.flush(), '\ufffd');
});

test('translateRegex: caseless groups and Rust whitespace', () => {
  const re = new RegExp(translateRegex("(?i:'s|'ll)|\\s+(?!\\S)|\\s+"), 'gu');
  assert.deepEqual("'S 'Ll x".match(re), ["'S", ' ', "'Ll", ' ']);
  assert.ok(new RegExp(translateRegex('^\\s$'), 'u').test('\u0085'), 'NEL is White_Space');
  assert.ok(!new RegExp(translateRegex('^\\s$'), 'u').test('\ufeff'), 'BOM is not White_Space');
});

/** A hand-made four-letter byte-level BPE tokenizer (a test double of a real checkpoint's file). */
function tinyTokenizerJson(): unknown {
  return {
    added_tokens: [{ id: 7, content: '<|end|>', special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    decoder: { type: 'ByteLevel' },
    model: { type: 'BPE', vocab: { a: 0, b: 1, Ġ: 2, ab: 3, Ġab: 4, c: 5, abc: 6 }, merges: ['a b', 'Ġ ab', 'ab c'] },
  };
}

test('merges written as "a b" strings and GPT-2 regex splitting', () => {
  const tok = tokenizerFromFiles({ tokenizerJson: tinyTokenizerJson(), tokenizerConfig: { eos_token: '<|end|>' } });
  assert.deepEqual(tok.encode('ab abc<|end|>'), [3, 4, 5, 7]);
  assert.deepEqual(tok.eosTokenIds, [7]);
  assert.equal(tok.decode([3, 4, 5, 7], { skipSpecialTokens: true }), 'ab abc');
});

test('unknown bytes and unsupported files fail with clear errors', async () => {
  const tok = tokenizerFromFiles({ tokenizerJson: tinyTokenizerJson() });
  assert.throws(() => tok.encode('z'), /no vocabulary entry/);
  assert.throws(() => tok.tokenBytes(99), /outside the vocabulary/);
  assert.throws(
    () => tokenizerFromFiles({ tokenizerJson: { model: { type: 'Unigram' } } }),
    /Unigram' is not supported/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'kimina-tok-'));
  await assert.rejects(loadTokenizer(dir), /no tokenizer.json in/);
  writeFileSync(join(dir, 'tokenizer.json'), '{ not json');
  await assert.rejects(loadTokenizer(dir), /cannot read .*tokenizer.json/);
});

test('a chat_template.jinja file is used when tokenizer_config.json has none', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-tok-'));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: { content: '<|end|>' } }));
  writeFileSync(join(dir, 'chat_template.jinja'), '{{ messages[0].content }}');
  const tok = await loadTokenizer(dir);
  assert.equal(tok.chatTemplate, '{{ messages[0].content }}');
  assert.equal(tok.eosToken, '<|end|>');
});

test('chat_template.jinja wins over tokenizer_config.json chat_template, as in transformers', async () => {
  // transformers 5.23.0 tokenization_utils_base.py (_from_pretrained): "If independent chat template file(s)
  // exist, they take priority over template entries in the tokenizer config".
  const dir = mkdtempSync(join(tmpdir(), 'kimina-tok-'));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ eos_token: '<|end|>', chat_template: 'from json: {{ messages[0].content }}' }),
  );
  writeFileSync(join(dir, 'chat_template.jinja'), 'from file: {{ messages[0].content }}');
  const tok = await loadTokenizer(dir);
  assert.equal(tok.chatTemplate, 'from file: {{ messages[0].content }}');
  assert.equal(await chatTemplateOf(tok).render([{ role: 'user', content: 'x' }]), 'from file: x');
  rmSync(join(dir, 'chat_template.jinja'));
  assert.equal((await loadTokenizer(dir)).chatTemplate, 'from json: {{ messages[0].content }}');
});

test('added tokens with lstrip / rstrip absorb the whitespace next to them, as HF does', () => {
  const json = tinyTokenizerJson() as { added_tokens: unknown[] };
  json.added_tokens.push({ id: 8, content: '<mask>', special: true, lstrip: true, rstrip: false });
  const tok = tokenizerFromFiles({ tokenizerJson: json });
  assert.deepEqual(tok.encode('ab  <mask>ab'), [3, 8, 3]);
  assert.deepEqual(tok.encode('ab <|end|>'), [3, 2, 7], 'a token without lstrip leaves the space alone');
});
