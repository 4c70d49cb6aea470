// The decoding worker thread: owns the onnxruntime session and the KV cache, runs one job at a time,
// streams each step's tokens to the main thread and listens for stop / cancel between steps.
import { parentPort } from 'node:worker_threads';
import { InThreadBackend, type DecodeJob } from './backends';
import type { WorkerReply, WorkerRequest } from './workerProtocol';

const port = parentPort;
if (!port) throw new Error('backend/model/onnx/worker.ts must run in a worker thread');
const send = (m: WorkerReply) => port.postMessage(m);
let backend: InThreadBackend | undefined;
const jobs = new Map<number, DecodeJob>();

port.on('message', (msg: WorkerRequest) => {
  switch (msg.type) {
    case 'load':
      InThreadBackend.load(msg.spec, (line) => send({ type: 'log', line }))
        .then((b) => {
          backend = b;
          send({ type: 'loaded', info: b.info });
        })
        .catch((e: Error) => send({ type: 'error', message: e.message }));
      break;
    case 'generate': {
      if (!backend) {
        send({ type: 'error', id: msg.id, message: 'ONNX worker: model not loaded' });
        break;
      }
      const job = backend.start(msg.request, (rows, tokens) => send({ type: 'tokens', id: msg.id, rows, tokens }));
      jobs.set(msg.id, job);
      job.done
        .then((results) => send({ type: 'done', id: msg.id, results }))
        .catch((e: Error) => send({ type: 'error', id: msg.id, message: e.message }))
        .finally(() => jobs.delete(msg.id));
      break;
    }
    case 'timeStep':
      if (!backend?.timeStep) send({ type: 'error', id: msg.id, message: 'this decoding path has no step probe' });
      else
        backend
          .timeStep(msg.rows, msg.cachedPerRow)
          .then((ms) => send({ type: 'timed', id: msg.id, ms }))
          .catch((e: Error) => send({ type: 'error', id: msg.id, message: e.message }));
      break;
    case 'stop':
      jobs.get(msg.id)?.stopRow(msg.row);
      break;
    case 'cancel':
      jobs.get(msg.id)?.cancel();
      break;
  }
});
