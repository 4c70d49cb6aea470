// The GGUF worker thread: writes one model folder's GGUF (ggufConvert.ts writeModelGguf) off the backend's event
// loop, posting its log lines and then the end. One job per worker; the caller terminates it after the answer.
import { parentPort } from 'node:worker_threads';
import { type GgufJob, type GgufMessage, writeModelGguf } from './ggufConvert';
import { LlamaUnavailable } from './runtime';

const port = parentPort;
if (!port) throw new Error('backend/model/llama/ggufWorker.ts must run in a worker thread');
const post = (m: GgufMessage) => port.postMessage(m);

port.on('message', (job: GgufJob) => {
  writeModelGguf(job, (line) => post({ log: line })).then(
    () => post({ end: true }),
    (e: Error) => post({ end: true, error: e.message, unavailable: e instanceof LlamaUnavailable }),
  );
});
