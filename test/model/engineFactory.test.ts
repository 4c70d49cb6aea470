import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as factory from '../../backend/model/index';
import {
  DEFAULT_OPENAI_BASE_URL,
  engineConfigOf,
  type CreateEngineOptions,
  type EngineConfig,
} from '../../backend/model/index';
import { kiminaHome, readSettings, type Env } from '../../backend/settings/settings';
import { DEFAULT_MODEL } from '../../backend/model/modelStore';
import { startStandInOpenAIServer } from './standInOpenAIServer';
import { QWEN3_DIR } from './qwen3Fixture';

// The settings are read by the commands and handed down; these tests read them from the environment they set.
const engineConfigFromEnv = (env: Env) => engineConfigOf(readSettings(env));
const createEngine = (config: EngineConfig, options: Partial<CreateEngineOptions> = {}) =>
  factory.createEngine(config, { home: kiminaHome(), ...options });

test('settings from the environment, with defaults and clear errors', () => {
  assert.deepEqual(engineConfigFromEnv({}), {
    engine: 'auto',
    model: undefined,
    openaiBaseUrl: DEFAULT_OPENAI_BASE_URL,
    openaiApiKey: undefined,
    openaiN: 'auto',
    device: 'cpu',
    threads: undefined,
    kvCache: 'auto',
    speculation: false,
    spinning: false,
    llamaGpu: 'auto',
    llamaWeights: 'q8_0',
    rowsAtOnce: 0,
    vllmIdleMinutes: 10,
    vllmGpuMemoryUtilization: 0.85,
    trainerPython: undefined,
    trainerVenv: join(kiminaHome(), 'trainer-venv'),
  });
  const c = engineConfigFromEnv({
    KIMINA_ENGINE: 'openai',
    KIMINA_MODEL: 'org/m',
    KIMINA_OPENAI_BASE_URL: 'http://h:1/v1',
    KIMINA_OPENAI_API_KEY: 'k',
    KIMINA_OPENAI_N: 'parallel',
    KIMINA_DEVICE: 'cuda',
    KIMINA_THREADS: '3',
    KIMINA_KV_CACHE: 'fp16',
    KIMINA_SPECULATION: '1',
    KIMINA_SPINNING: 'on',
    KIMINA_ROWS_AT_ONCE: '2',
  });
  assert.deepEqual(c, {
    engine: 'openai',
    model: 'org/m',
    openaiBaseUrl: 'http://h:1/v1',
    openaiApiKey: 'k',
    openaiN: 'parallel',
    device: 'cuda',
    threads: 3,
    kvCache: 'fp16',
    speculation: true,
    spinning: true,
    llamaGpu: 'auto',
    llamaWeights: 'q8_0',
    rowsAtOnce: 2,
    vllmIdleMinutes: 10,
    vllmGpuMemoryUtilization: 0.85,
    trainerPython: undefined,
    trainerVenv: join(kiminaHome(), 'trainer-venv'),
  });
  assert.equal(engineConfigFromEnv({ KIMINA_DEVICE: 'auto' }).device, 'cpu');
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_ENGINE: 'tensorrt' }),
    /KIMINA_ENGINE must be one of auto, onnx, openai, llama, vllm, got 'tensorrt'/,
  );
  assert.equal(engineConfigFromEnv({ KIMINA_ENGINE: 'llama', KIMINA_LLAMA_GPU: 'vulkan' }).llamaGpu, 'vulkan');
  assert.equal(engineConfigFromEnv({ KIMINA_LLAMA_WEIGHTS: 'f16' }).llamaWeights, 'f16');
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_LLAMA_WEIGHTS: 'q2_k' }),
    /KIMINA_LLAMA_WEIGHTS must be one of q8_0, f16, q4_0, f32, got 'q2_k'/,
  );
  assert.throws(() => engineConfigFromEnv({ KIMINA_THREADS: '0' }), /KIMINA_THREADS must be a positive whole number/);
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_ROWS_AT_ONCE: '-1' }),
    /KIMINA_ROWS_AT_ONCE must be a whole number, 0 or more/,
  );
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_ROWS_AT_ONCE: '1.5' }),
    /KIMINA_ROWS_AT_ONCE must be a whole number/,
  );
  assert.equal(engineConfigFromEnv({ KIMINA_VLLM_IDLE_MINUTES: '0.5' }).vllmIdleMinutes, 0.5);
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_VLLM_IDLE_MINUTES: '-1' }),
    /KIMINA_VLLM_IDLE_MINUTES must be 0 or more/,
  );
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_VLLM_GPU_MEMORY_UTILIZATION: '1.5' }),
    /KIMINA_VLLM_GPU_MEMORY_UTILIZATION must be above 0 and at most 1/,
  );
  assert.equal(engineConfigFromEnv({ KIMINA_KV_CACHE: 'int8' }).kvCache, 'int8');
  assert.throws(
    () => engineConfigFromEnv({ KIMINA_KV_CACHE: 'int4' }),
    /KIMINA_KV_CACHE must be one of auto, fp32, fp16, int8, got 'int4'/,
  );
});

test('onnx without any model says to pull one', async () => {
  const previous = process.env.KIMINA_HOME;
  process.env.KIMINA_HOME = mkdtempSync(join(tmpdir(), 'kimina-factory-'));
  try {
    await assert.rejects(
      createEngine(engineConfigFromEnv({})),
      new RegExp(`run \`kimina model pull ${DEFAULT_MODEL}\``),
    );
    await assert.rejects(
      createEngine(engineConfigFromEnv({ KIMINA_MODEL: '/no/such/folder' })),
      /the model folder \/no\/such\/folder \(KIMINA_MODEL\) does not exist/,
    );
  } finally {
    if (previous === undefined) delete process.env.KIMINA_HOME;
    else process.env.KIMINA_HOME = previous;
  }
});

test('openai: connects to the server; a folder as KIMINA_MODEL lends its tokenizer', async () => {
  const server = await startStandInOpenAIServer({ answer: () => '<think>\nhm\n</think>\nok' });
  try {
    const engine = await createEngine(
      engineConfigFromEnv({ KIMINA_ENGINE: 'openai', KIMINA_OPENAI_BASE_URL: server.baseUrl, KIMINA_MODEL: QWEN3_DIR }),
      { log: () => {} },
    );
    assert.equal(engine.name, 'openai');
    assert.equal(engine.model, 'AI-MO/Kimina-Prover-RL-0.6B', "the server's only model");
    const [g] = await engine.generate([[{ role: 'user', content: 'hi' }]], { maxTokens: 50, temperature: 0, topP: 1 });
    assert.equal(g.text, '<think>\nhm\n</think>\nok');
    assert.ok((await engine.countPromptTokens([{ role: 'user', content: 'hi' }])) > 3);
    assert.equal((engine as unknown as { tokenCountSource: string }).tokenCountSource, 'local');
    await engine.close();
  } finally {
    await server.close();
  }
});

test('onnx: loads a model folder by path, and a store model by hub id', async () => {
  const { writeTinyModel } = await import('../../backend/demo/models/tinyModel');
  const home = mkdtempSync(join(tmpdir(), 'kimina-factory-'));
  const inStore = join(home, 'models', 'test-org', 'tiny');
  writeTinyModel(inStore, { seed: 3 });
  const previous = process.env.KIMINA_HOME;
  process.env.KIMINA_HOME = home;
  try {
    for (const model of [inStore, 'test-org/tiny']) {
      const engine = await createEngine(engineConfigFromEnv({ KIMINA_MODEL: model, KIMINA_THREADS: '1' }), {
        log: () => {},
      });
      try {
        assert.equal(engine.name, 'onnx');
        const [g] = await engine.generate([[{ role: 'user', content: 'hi' }]], {
          maxTokens: 4,
          temperature: 0,
          topP: 1,
        });
        assert.ok(g.tokens > 0 && g.tokens <= 4);
        assert.ok((await engine.countPromptTokens([{ role: 'user', content: 'hi' }])) > 3);
      } finally {
        await engine.close();
      }
    }
  } finally {
    if (previous === undefined) delete process.env.KIMINA_HOME;
    else process.env.KIMINA_HOME = previous;
  }
});
