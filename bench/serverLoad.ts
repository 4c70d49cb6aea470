// The load bench:verify puts on a verification server: `clients` concurrent clients, each posting one
// snippet per POST /api/check, the snippets spread over `headers` distinct import headers.
export interface LoadOptions {
  clients: number;
  total: number;
  headers: number;
  reuse: boolean;
  /** Bearer token, when the server wants one. */
  token?: string;
}

export interface LoadResult { checks: number; perSecond: number; p50: number; p99: number; accepted: number }

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs the load against `url` and returns throughput, latency percentiles and how many Lean accepted. */
export async function driveChecks(url: string, o: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let accepted = 0;
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: o.clients }, async () => {
    for (;;) {
      const i = next++;
      if (i >= o.total) return;
      const code = `import Header${i % o.headers}\n\ntheorem t${i} (a : ℕ) : a + 0 = a := by\n  simp`;
      const start = performance.now();
      const res = await fetch(`${url}/api/check`, {
        method: 'POST', headers,
        body: JSON.stringify({ snippets: [{ id: String(i), code }], timeout: 60, debug: false, reuse: o.reuse, infotree: null }),
      });
      const body = await res.json() as { results?: { error?: string | null; response?: { messages?: { severity: string }[] } | null }[] };
      latencies.push(performance.now() - start);
      const result = body.results?.[0];
      if (res.status === 200 && result && !result.error && result.response && !(result.response.messages ?? []).some((m) => m.severity === 'error')) accepted++;
    }
  }));
  const wall = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { checks: o.total, perSecond: o.total / wall, p50: percentile(latencies, 50), p99: percentile(latencies, 99), accepted };
}
