// The load bench:verify puts on a verification server: `clients` concurrent clients, each posting one
// snippet per POST /api/check (through the one typed client), the snippets spread over `headers` distinct
// import headers.
import { ApiClient } from '../backend/client/apiClient';
import type { CheckResponse } from '../backend/protocol';
export interface LoadOptions {
  clients: number;
  total: number;
  headers: number;
  reuse: boolean;
  /** Bearer token, when the server wants one. */
  token?: string;
}

export interface LoadResult {
  checks: number;
  perSecond: number;
  p50: number;
  p99: number;
  accepted: number;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs the load against `url` and returns throughput, latency percentiles and how many Lean accepted. */
export async function driveChecks(url: string, o: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let accepted = 0;
  const api = new ApiClient({ url, token: o.token });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.clients }, async () => {
      for (;;) {
        const i = next++;
        if (i >= o.total) return;
        const code = `import Header${i % o.headers}\n\ntheorem t${i} (a : ℕ) : a + 0 = a := by\n  simp`;
        const start = performance.now();
        const res = await api.request('apiCheck', {
          body: { snippets: [{ id: String(i), code }], timeout: 60, debug: false, reuse: o.reuse, infotree: null },
        });
        latencies.push(performance.now() - start);
        const result = res.status === 200 ? (res.body as CheckResponse).results[0] : undefined;
        const messages = (result?.response as { messages?: { severity: string }[] } | undefined)?.messages;
        if (result && !result.error && result.response && !(messages ?? []).some((m) => m.severity === 'error'))
          accepted++;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    checks: o.total,
    perSecond: o.total / wall,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    accepted,
  };
}
