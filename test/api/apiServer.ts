// Starts the real HTTP app over the real verifier and pool, with stand-in REPLs (test double).
import { createApp, listen, type Listening, type RouterFactory } from '../../backend/api/server';
import { standInVerifier, type StandInSetup } from '../lean/standInVerifier';

export interface TestServer extends StandInSetup {
  http: Listening;
  url: string;
  stop(): Promise<void>;
}

export async function startTestServer(
  options: Parameters<typeof standInVerifier>[0] & {
    token?: string;
    bodyLimitBytes?: number;
    extra?: RouterFactory[];
  } = {},
): Promise<TestServer> {
  const s = standInVerifier(options);
  const app = await createApp({ verifier: s.verifier }, options.extra ?? [], {
    token: options.token,
    bodyLimitBytes: options.bodyLimitBytes,
  });
  const http = await listen(app, '127.0.0.1', 0, options.token);
  return {
    ...s,
    http,
    url: http.url,
    stop: async () => {
      await http.close();
      await s.verifier.close();
    },
  };
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
