import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseFrames, type SseFrame } from '../../backend/protocol';

/** The data of each event: what the OpenAI-compatible engine reads from SseFrames. */
class SseParser {
  private readonly frames = new SseFrames();
  push = (chunk: string | Uint8Array): string[] => this.frames.push(chunk).map((f: SseFrame) => f.data);
  end = (): string[] => this.frames.end().map((f: SseFrame) => f.data);
}
import { ThinkFolder, reasoningOf } from '../../backend/model/openai/reasoning';
import { rootOf } from '../../backend/model/openai/engine';

test('SSE parser: events split across chunks, CRLF, comments, multi-line data, no final blank line', () => {
  const p = new SseParser();
  assert.deepEqual(p.push('data: {"a"'), []);
  assert.deepEqual(p.push(':1}\n'), []);
  assert.deepEqual(p.push('\n: keep-alive\n\nevent: x\r'), ['{"a":1}']);
  assert.deepEqual(p.push('\ndata:first\r\ndata: second\r\n\r\ndata: [DONE]'), ['first\nsecond']);
  assert.deepEqual(p.end(), ['[DONE]']);
});

test('SSE parser: a UTF-8 character split between byte chunks survives', () => {
  const p = new SseParser();
  const bytes = new TextEncoder().encode('data: ℝ𝔽\n\n');
  assert.deepEqual(p.push(bytes.slice(0, 8)), []);
  assert.deepEqual(p.push(bytes.slice(8)), ['ℝ𝔽']);
});

test('think folder: vLLM-style reasoning is rebuilt byte for byte', () => {
  const f = new ThinkFolder();
  const raw = '<think>\nreason ```tactics\n  simp\n```\n</think>\n\nanswer';
  const parts = [
    f.push({ reasoning: '\nreason ' }),
    f.push({ reasoning: '```tactics\n  simp\n```\n' }),
    f.push({ content: '\n\nans' }),
    f.push({ content: 'wer' }),
  ];
  assert.equal(parts.join(''), raw);
});

test('think folder: trimmed reasoning gets Qwen newlines back; plain content passes through', () => {
  const f = new ThinkFolder();
  assert.equal(
    f.push({ reasoning: 'a' }) + f.push({ reasoning: 'b' }) + f.push({ content: 'c' }),
    '<think>\nab\n</think>\nc',
  );
  const g = new ThinkFolder();
  assert.equal(g.push({ content: '<think>\nx\n</think>\ny' }), '<think>\nx\n</think>\ny');
  const h = new ThinkFolder();
  assert.equal(
    h.push({ reasoning: 'cut off by max_tokens' }),
    '<think>\ncut off by max_tokens',
    'no invented closing tag',
  );
});

test('reasoning field names of each server style', () => {
  assert.equal(reasoningOf({ reasoning: 'a' }), 'a');
  assert.equal(reasoningOf({ reasoning_content: 'b' }), 'b');
  // vLLM sends both names with the same text (DeltaMessage copies reasoning into reasoning_content): read once.
  assert.equal(reasoningOf({ reasoning: 'c', reasoning_content: 'c' }), 'c');
  // `thinking` is Ollama's native /api/chat name; its /v1 answers `reasoning` (openai.go): not read.
  assert.equal(reasoningOf({ thinking: 'x' }), undefined);
  assert.equal(reasoningOf({ content: 'd', reasoning: null }), undefined);
  assert.equal(rootOf('http://h:8000/v1/'), 'http://h:8000');
  assert.equal(rootOf('http://h:11434'), 'http://h:11434');
});
