// Opt-in checks against real services, skipped unless their variables are set:
//   KIMINA_TEST_OPENAI_BASE_URL (+ KIMINA_TEST_OPENAI_MODEL): a running vLLM / llama.cpp / Ollama server
//   KIMINA_TEST_HUB=1: list the default model on huggingface.co (needs network)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIEngine } from '../../backend/model/openai/engine';
import { hubOptionsOf, listRepoFiles } from '../../backend/model/hub';
import { readSettings } from '../../backend/settings/settings';
import { DEFAULT_MODEL } from '../../backend/model/store';

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
  'real hub: the default model is listed with safetensors weights',
  { skip: process.env.KIMINA_TEST_HUB ? false : 'set KIMINA_TEST_HUB=1 to run (needs network)' },
  async () => {
    const listing = await listRepoFiles(DEFAULT_MODEL, 'main', hubOptionsOf(readSettings()));
    assert.ok(listing.commit);
    assert.ok(listing.files.some((f) => f.path.endsWith('.safetensors') && f.sha256));
  },
);
