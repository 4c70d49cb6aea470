// Opt-in checks against real services, skipped unless their variables are set:
//   KIMINA_TEST_OPENAI_BASE_URL (+ KIMINA_TEST_OPENAI_MODEL): a running vLLM / llama.cpp / Ollama server
//   KIMINA_TEST_HUB=1: list the default model on huggingface.co (needs network)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIEngine } from '../../backend/model/openai/engine';
import { hubOptionsOf, listRepoFiles } from '../../backend/model/hub';
import { readSettings } from '../../backend/settings/settings';
import { DEFAULT_MODEL } from '../../backend/model/modelStore';

const base = process.env.KIMINA_TEST_OPENAI_BASE_URL;
test(
  'real OpenAI-compatible server: a short streamed answer and a token count',
  { skip: base ? false : 'set KIMINA_TEST_OPENAI_BASE_URL to run' },
  async () => {
    const engine = await OpenAIEngine.connect({ baseUrl: base!, model: process.env.KIMINA_TEST_OPENAI_MODEL });
    let streamed = '';
    const [g] = await engine.generate(
      [[{ role: 'user', content: 'Say hello.' }]],
      { maxTokens: 64, temperature: 0, topP: 1 },
      (_i, d) => {
        streamed += d;
      },
    );
    assert.equal(streamed, g.text);
    assert.ok(g.tokens > 0);
    assert.ok((await engine.countPromptTokens([{ role: 'user', content: 'Say hello.' }])) > 0);
  },
);

test(
  'real OpenAI-compatible server: 4 samples whatever it does with n, each cut answer said so',
  { skip: base ? false : 'set KIMINA_TEST_OPENAI_BASE_URL to run' },
  async () => {
    const logs: string[] = [];
    const engine = await OpenAIEngine.connect({
      baseUrl: base!,
      model: process.env.KIMINA_TEST_OPENAI_MODEL,
      log: (l) => logs.push(l),
    });
    const c = [{ role: 'user' as const, content: 'Count from 1 to 200, one number a line.' }];
    // n=4 honoured (vLLM, SGLang), refused with HTTP 500 (llama.cpp) or ignored (Ollama): 4 answers either way.
    const gens = await engine.generate([c, c, c, c], { maxTokens: 8, temperature: 1, topP: 1, seed: 1 });
    assert.equal(gens.length, 4);
    for (const g of gens) {
      assert.ok(g.tokens > 0 && g.text.length > 0);
      assert.equal(g.finishReason, 'length', 'an 8-token budget cuts this answer');
      assert.match(g.cut ?? '', /length|context/);
    }
    console.log(logs.join('\n'));
  },
);

test(
  'real hub: the default model is listed with safetensors weights',
  { skip: process.env.KIMINA_TEST_HUB ? false : 'set KIMINA_TEST_HUB=1 to run (needs network)' },
  async () => {
    const listing = await listRepoFiles(DEFAULT_MODEL, 'main', hubOptionsOf(readSettings()));
    assert.ok(listing.commit);
    assert.ok(listing.files.some((f) => f.path.endsWith('.safetensors') && f.sha256));
  },
);
