// The statement worker thread: finds declarations and builds formal statements of large sources off the
// server's event loop (a 1 M-character /v1/prove request, a large file harvested for training). One job per
// worker; the caller (offThread.ts) terminates it after the answer.
import { parentPort } from 'node:worker_threads';
import { type StatementJob, postInBatches } from './offThread';

const port = parentPort;
if (!port) throw new Error('backend/lean/statementWorker.ts must run in a worker thread');

port.on('message', (job: StatementJob) => postInBatches(job, (m) => port.postMessage(m)));
