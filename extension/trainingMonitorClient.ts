// The Training Monitor host's link to the backend: the contract's typed client (backend/protocol/client.ts)
// over the current address, and the training event stream with reconnects. No vscode import, so it is
// testable against a real backend in node.
import { ApiClient, type TrainingStreamEvent } from '../backend/protocol';

export interface BackendAddress { httpUrl(): string | undefined; token(): string | undefined }

/** A client that reads the backend's address and token on every call (they change when the backend restarts). */
export function backendClient(backend: BackendAddress): ApiClient {
  return new ApiClient({ url: () => backend.httpUrl(), token: () => backend.token() });
}

export type StreamStatus = 'connecting' | 'connected' | 'disconnected' | 'no-backend';

/**
 * Follows GET /v1/training/events, reconnecting (1 s, doubling to 15 s) when the backend goes away or its
 * address changes. `stop()` ends it.
 */
export function followTrainingEvents(backend: BackendAddress, onEvent: (e: TrainingStreamEvent) => void,
  onStatus: (s: StreamStatus, message?: string) => void): { stop(): void } {
  const api = backendClient(backend);
  let stopped = false;
  let controller: AbortController | null = null;
  let delay = 1000;
  const loop = async () => {
    while (!stopped) {
      if (!backend.httpUrl()) { onStatus('no-backend'); await sleep(2000); continue; }
      controller = new AbortController();
      onStatus('connecting');
      try {
        const events = await api.openStream('trainingEvents', { signal: controller.signal });
        onStatus('connected');
        delay = 1000;
        for await (const event of events) {
          onEvent(event);
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
