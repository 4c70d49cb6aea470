// The chat-template renderer's child process (templateProcess.ts starts it): renders one conversation at a time
// with a checkpoint's Jinja template, under the heap limit its parent gave it. A template that loops is
// stopped by the parent (kill); one that allocates past the heap limit ends this process, not the server.
import { renderInPlace } from './chatTemplate';
import type { RenderJob } from './templateProcess';

if (!process.send) throw new Error('backend/model/templateWorker.ts must run as a child process with an IPC channel');
const send = process.send.bind(process);

send({ ready: true });
process.on('message', (job: RenderJob) => {
  try {
    const text = renderInPlace(job);
    if (text.length > job.maxChars)
      send({ id: job.id, ok: false, message: `the rendered prompt passed ${job.maxChars} characters` });
    else send({ id: job.id, ok: true, text });
  } catch (err) {
    send({ id: job.id, ok: false, message: (err as Error).message });
  }
});
process.on('disconnect', () => process.exit(0));
