// Integration: whatever reasoning style a server uses, the text the OpenAI engine returns passes the
// recipe's format check exactly as the raw model text does (kimina-format.md §9).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIEngine } from '../../backend/model/openai/engine';
import { checkAnswer } from '../../backend/prover/format';
import { STATEMENT, WELL_FORMED } from '../../backend/demo/kiminaExamples';
import { startStandInOpenAIServer, type StandInOptions } from './standInOpenAIServer';

const styles: Array<[string, Partial<StandInOptions>]> = [
  ['no reasoning parser', {}],
  ['vLLM reasoning', { reasoningField: 'reasoning' }],
  ['reasoning_content, trimmed', { reasoningField: 'reasoning_content', trimReasoning: true }],
];

for (const [name, style] of styles) {
  test(`the §8.1 answer passes the format check through a server with ${name}`, async () => {
    assert.equal(checkAnswer(WELL_FORMED, STATEMENT).ok, true, 'the raw answer is well formed');
    const server = await startStandInOpenAIServer({ answer: () => WELL_FORMED, chunkChars: 3, ...style });
    try {
      const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl });
      const [g] = await engine.generate([[{ role: 'user', content: 'prove it' }]], {
        maxTokens: 4000,
        temperature: 1,
        topP: 1,
      });
      const check = checkAnswer(g.text, STATEMENT);
      assert.equal(check.error, 'NONE');
      assert.equal(check.finalCode, checkAnswer(WELL_FORMED, STATEMENT).finalCode);
    } finally {
      await server.close();
    }
  });
}
