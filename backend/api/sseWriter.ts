// Server-sent events for any route that streams (prove progress, training metrics):
// `const stream = openSse(req, res); stream.send('event', data); stream.close();`
import type { Request, Response } from 'express';

export interface SseStream {
  /** Sends one event; `data` is JSON-encoded. Does nothing once the client is gone. */
  send(event: string, data: unknown, id?: string | number): void;
  /** A comment line (keeps proxies from timing out). */
  comment(text: string): void;
  close(): void;
  /** Aborted when the client disconnects or close() is called. */
  readonly signal: AbortSignal;
}

export function openSse(_req: Request, res: Response, heartbeatMs = 15_000): SseStream {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  const controller = new AbortController();
  const heartbeat = setInterval(() => {
    if (!controller.signal.aborted) res.write(': keep-alive\n\n');
  }, heartbeatMs);
  heartbeat.unref();
  const stop = (): void => {
    if (controller.signal.aborted) return;
    clearInterval(heartbeat);
    controller.abort();
  };
  // the response closes when the client goes away (a request's own 'close' fires once its body is read)
  res.on('close', stop);
  return {
    signal: controller.signal,
    send(event, data, id) {
      if (controller.signal.aborted) return;
      const lines = JSON.stringify(data)
        .split('\n')
        .map((l) => `data: ${l}`)
        .join('\n');
      res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\n${lines}\n\n`);
    },
    comment(text) {
      if (!controller.signal.aborted) res.write(`: ${text.replace(/\n/g, ' ')}\n\n`);
    },
    close() {
      stop();
      res.end();
    },
  };
}
