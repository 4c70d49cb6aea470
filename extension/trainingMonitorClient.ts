// The Training Monitor host's link to the backend: JSON calls and the SSE event stream, with reconnects.
// No vscode import, so it is testable against a real backend in node.
import type { TrainingStreamEvent } from '../backend/protocol';

export interface BackendAddress { httpUrl(): string | undefined; token(): string | undefined }

export class BackendCallError extends Error {
  constructor(message: string, readonly status: number) { super(message); }
}

export async function callBackend<T>(backend: BackendAddress, method: string, path: string, body?: unknown): Promise<T> {
  const url = backend.httpUrl();
  if (!url) throw new BackendCallError('the Kimina backend is not running', 0);
  const token = backend.token();
  const res = await fetch(url.replace(/\/+$/, '') + path, {
    method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* plain text */ }
  if (!res.ok) {
    const detail = parsed && typeof parsed === 'object' && 'detail' in parsed ? (parsed as { detail: unknown }).detail : parsed;
    throw new BackendCallError(typeof detail === 'string' ? detail : JSON.stringify(detail), res.status);
  }
  return parsed as T;
}

/** Incremental SSE parser: feed text chunks, get complete events (`event:` name and JSON `data:`). */
export class SseParser {
  private buffer = '';
  push(chunk: string): { event: string; data: unknown }[] {
    this.buffer += chunk.replace(/\r\n/g, '\n');
    const out: { event: string; data: unknown }[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) continue;
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) {
        try { out.push({ event, data: JSON.parse(data.join('\n')) }); } catch { /* a malformed frame is skipped */ }
      }
    }
    return out;
  }
}

export type StreamStatus = 'connecting' | 'connected' | 'disconnected' | 'no-backend';

/**
 * Follows GET /v1/training/events, reconnecting (1 s, doubling to 15 s) when the backend goes away or its
 * address changes. `stop()` ends it.
 */
export function followTrainingEvents(backend: BackendAddress, onEvent: (e: TrainingStreamEvent) => void,
  onStatus: (s: StreamStatus, message?: string) => void): { stop(): void } {
  let stopped = false;
  let controller: AbortController | null = null;
  let delay = 1000;
  const loop = async () => {
    while (!stopped) {
      const url = backend.httpUrl();
      if (!url) { onStatus('no-backend'); await sleep(2000); continue; }
      controller = new AbortController();
      onStatus('connecting');
      try {
        const token = backend.token();
        const res = await fetch(url.replace(/\/+$/, '') + '/v1/training/events', {
          headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) }, signal: controller.signal,
        });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        onStatus('connected');
        delay = 1000;
        const parser = new SseParser();
        const decoder = new TextDecoder();
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          for (const e of parser.push(decoder.decode(chunk, { stream: true }))) onEvent(e.data as TrainingStreamEvent);
          if (stopped) break;
        }
        if (!stopped) onStatus('disconnected');
      } catch (err) {
        if (stopped) break;
        onStatus('disconnected', err instanceof Error ? err.message : String(err));
      }
      await sleep(delay);
      delay = Math.min(15_000, delay * 2);
    }
  };
  void loop();
  return { stop: () => { stopped = true; controller?.abort(); } };
}

function sleep(ms: number): Promise<void> { return new Promise((r) => setTimeout(r, ms)); }
