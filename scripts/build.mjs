// One build for the whole project: the CLI/backend, the VS Code extension and the webviews.
import { build } from 'esbuild';
import { chmodSync, mkdirSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const common = { bundle: true, sourcemap: true, logLevel: 'warning', target: 'node20' };
// Native modules stay outside the bundle and load from node_modules at run time.
const nativeExternals = ['onnxruntime-node', 'libsql', 'better-sqlite3', '@resvg/resvg-js', 'tsx/cjs'];

mkdirSync('dist/media', { recursive: true });
const jobs = [
  build({
    ...common,
    platform: 'node',
    format: 'cjs',
    entryPoints: ['backend/cli.ts'],
    outfile: 'dist/cli.js',
    external: nativeExternals,
    banner: { js: '#!/usr/bin/env node' },
  }),
  // The ONNX engine decodes in a worker thread; it loads this file from next to dist/cli.js.
  build({
    ...common,
    platform: 'node',
    format: 'cjs',
    entryPoints: ['backend/model/onnx/worker.ts'],
    outfile: 'dist/onnx-worker.js',
    external: nativeExternals,
  }),
  // Chat templates render in a child process with a heap and time limit (backend/model/templateProcess.ts).
  build({
    ...common,
    platform: 'node',
    format: 'cjs',
    entryPoints: ['backend/model/templateWorker.ts'],
    outfile: 'dist/template-worker.js',
    external: nativeExternals,
  }),
  // Large sources' declarations and statements are read in a worker thread (backend/lean/offThread.ts).
  build({
    ...common,
    platform: 'node',
    format: 'cjs',
    entryPoints: ['backend/lean/statementWorker.ts'],
    outfile: 'dist/statement-worker.js',
    external: nativeExternals,
  }),
  // llama.cpp's GGUF is written in a worker thread (backend/model/llama/ggufConvert.ts).
  build({
    ...common,
    platform: 'node',
    format: 'cjs',
    entryPoints: ['backend/model/llama/ggufWorker.ts'],
    outfile: 'dist/gguf-worker.js',
    external: nativeExternals,
  }),
  build({
    ...common,
    platform: 'node',
    format: 'cjs',
    entryPoints: ['extension/main.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
  }),
  build({
    ...common,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    entryPoints: {
      proofView: 'media/proofView.ts',
      trainingMonitor: 'media/trainingMonitor.ts',
      trainingCharts: 'media/trainingCharts.ts',
    },
    outdir: 'dist/media',
    loader: { '.css': 'css' },
  }),
];
await Promise.all(jobs);
chmodSync('dist/cli.js', 0o755);
if (!watch) console.log('build: dist/cli.js, dist/extension.js, dist/media/*');
