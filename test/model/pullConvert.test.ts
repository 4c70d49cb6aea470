// End to end over the real pieces: a tiny Qwen3 safetensors checkpoint on the stand-in hub (TEST DOUBLE
// server) -> `pullModel` with the real converter (backend/model/onnx/convert.ts) -> `createEngine` by hub id
// -> greedy decoding equals the same model converted locally.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertCheckpoint } from '../../backend/model/onnx/convert';
import { graphHasSharedPrefix, ONNX_KV16_FILE } from '../../backend/model/onnx/modelFolder';
import * as factory from '../../backend/model/index';
import { engineConfigOf, type CreateEngineOptions, type EngineConfig } from '../../backend/model/index';
import { kiminaHome, readSettings, type Env } from '../../backend/settings/settings';
import { hubOptionsOf } from '../../backend/model/hub';
import * as store from '../../backend/model/modelStore';
import { CHECKPOINT_SUBDIR, readManifest } from '../../backend/model/modelStore';
import { startStandInHub } from './standInHub';
import { tinyCheckpointFiles } from './tinyCheckpoint';

// The settings are read by the commands and handed down; these tests read them from the environment they set.
const engineConfigFromEnv = (env: Env) => engineConfigOf(readSettings(env));
const createEngine = (config: EngineConfig, options: Partial<CreateEngineOptions> = {}) =>
  factory.createEngine(config, { home: kiminaHome(), ...options });
const pullModel = (id: string, o: Partial<store.PullOptions> = {}) =>
  store.pullModel(id, { ...hubOptionsOf(readSettings()), home: kiminaHome(), ...o });

const files = tinyCheckpointFiles();
const hubPromise = startStandInHub({
  repos: { 'tiny-org/tiny-qwen3': { commit: 'e'.repeat(40), files, lfs: ['model.safetensors'] } },
});
after(async () => (await hubPromise).close());

test('pull converts a hub checkpoint with the real converter; the engine loads it by id and decodes like a local conversion', async () => {
  const hub = await hubPromise;
  const home = mkdtempSync(join(tmpdir(), 'kimina-pull-'));
  const previous = process.env.KIMINA_HOME;
  process.env.KIMINA_HOME = home;
  try {
    const stages = new Set<string>();
    const result = await pullModel('tiny-org/tiny-qwen3', {
      hfEndpoint: hub.endpoint,
      quantize: 'fp32',
      convert: (src, out, o) =>
        convertCheckpoint(src, out, {
          quantize: o.quantize,
          onProgress: (p) => o.onProgress?.({ done: p.done, total: p.total, stage: p.tensor }),
        }),
      onEvent: (e) => stages.add(e.stage),
    });
    assert.equal(result.converted, true);
    assert.deepEqual([...stages], ['listing', 'download', 'convert', 'done']);
    assert.equal(readManifest(result.dir)?.quantize, 'fp32');

    // Reference: the same checkpoint converted straight from the downloaded folder, elsewhere.
    const local = mkdtempSync(join(tmpdir(), 'kimina-local-'));
    await convertCheckpoint(join(result.dir, CHECKPOINT_SUBDIR), local, { quantize: 'fp32' });
    const conversation = [{ role: 'user' as const, content: 'theorem t : 1 + 1 = 2 := by' }];
    const sampling = { maxTokens: 12, temperature: 0, topP: 1 };
    const texts: string[] = [];
    for (const model of ['tiny-org/tiny-qwen3', local]) {
      const engine = await createEngine(engineConfigFromEnv({ KIMINA_MODEL: model, KIMINA_THREADS: '1' }), {
        log: () => {},
      });
      try {
        const [g] = await engine.generate([conversation], sampling);
        assert.ok(g.tokens > 0);
        texts.push(g.text);
      } finally {
        await engine.close();
      }
    }
    assert.equal(texts[0], texts[1]);

    // Pulling again converts nothing, unless the folder predates the float16-cache graph.
    const convert = (src: string, out: string, o: { quantize: 'q4' | 'fp32' }) =>
      convertCheckpoint(src, out, { quantize: o.quantize });
    assert.equal(
      (await pullModel('tiny-org/tiny-qwen3', { hfEndpoint: hub.endpoint, quantize: 'fp32', convert })).converted,
      false,
    );
    rmSync(join(result.dir, ONNX_KV16_FILE));
    assert.equal(
      (await pullModel('tiny-org/tiny-qwen3', { hfEndpoint: hub.endpoint, quantize: 'fp32', convert })).converted,
      true,
    );
    assert.ok(existsSync(join(result.dir, ONNX_KV16_FILE)));
    // Or predates shared-prefix attention (a graph without its inputs).
    await convertCheckpoint(join(result.dir, CHECKPOINT_SUBDIR), result.dir, {
      quantize: 'fp32',
      graph: { sharedPrefix: false },
    });
    assert.equal(graphHasSharedPrefix(result.dir), false);
    assert.equal(
      (await pullModel('tiny-org/tiny-qwen3', { hfEndpoint: hub.endpoint, quantize: 'fp32', convert })).converted,
      true,
    );
    assert.ok(graphHasSharedPrefix(result.dir));
  } finally {
    if (previous === undefined) delete process.env.KIMINA_HOME;
    else process.env.KIMINA_HOME = previous;
  }
});
