// Opt-in: a real model folder (KIMINA_TEST_MODEL_DIR), either already in our ONNX layout or a Hugging
// Face safetensors checkpoint (converted to 4-bit into a temporary folder first).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { OnnxEngine } from '../../../backend/model/onnx/engine';
import { convertCheckpoint } from '../../../backend/model/onnx/convert';
import type { ChatMessage } from '../../../backend/protocol';
import { ALGEBRA_STATEMENT } from '../../../backend/demo/models/scriptedModel';
import { tempDir } from './helpers';

const modelDir = process.env.KIMINA_TEST_MODEL_DIR;
const skip = modelDir
  ? false
  : 'KIMINA_TEST_MODEL_DIR is not set (point it at a Kimina/Qwen3 model folder to run this suite)';

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are an expert in mathematics and proving theorems in Lean 4.' },
  {
    role: 'user',
    content: `Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\n\n\n# Formal Statement:\n\`\`\`lean4\nimport Mathlib\n\n${ALGEBRA_STATEMENT} := by\n  sorry\n\`\`\`\n`,
  },
];

test(
  'a real model loads, decodes deterministically and batches n samples',
  { skip, timeout: 30 * 60_000 },
  async () => {
    let dir = modelDir!;
    if (!existsSync(join(dir, 'onnx', 'model.onnx'))) {
      const out = tempDir('kimina-real-');
      await convertCheckpoint(dir, out, { quantize: 'q4' });
      dir = out;
    }
    const engine = await OnnxEngine.load(dir, { log: (l) => console.error(l) });
    try {
      const started = Date.now();
      const [a] = await engine.generate([conversation], { maxTokens: 48, temperature: 0, topP: 1 });
      const seconds = (Date.now() - started) / 1000;
      console.error(
        `real model: ${a.tokens} tokens in ${seconds.toFixed(1)} s: ${JSON.stringify(a.text.slice(0, 120))}`,
      );
      assert.ok(a.tokens > 0 && a.text.length > 0);
      const [b, c] = await engine.generate([conversation, conversation], { maxTokens: 48, temperature: 0, topP: 1 });
      assert.equal(b.text, a.text);
      assert.equal(c.text, a.text);
    } finally {
      await engine.close();
    }
  },
);
