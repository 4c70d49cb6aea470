// `kimina serve` without the process around it: the HTTP API over the app's parts (one store, one verifier
// pool, one engine shared by every router). `stop()` cancels running work while HTTP still answers, closes
// the listener, then closes the app (last opened first). backend/cli/serve.ts adds flags, signals and serve.json.
import { extraRouters } from '../api/mounts';
import {
  CloseHooks,
  createApp,
  listen,
  type ApiContext,
  type ApiRouterFactory,
  type CloseHook,
  type Listening,
} from '../api/server';
import type { App } from './app';

/** The routers' context, every service from the app (the one wiring place). */
export function apiContextOf(
  app: App,
  o: { token: string | undefined; backendUrl: () => string | undefined; onClose: (hook: CloseHook) => void },
): ApiContext {
  let tools: ReturnType<App['agentToolbox']> | undefined;
  return {
    verifier: app.verifier().admission,
    engine: () => app.engine(),
    settings: app.settings,
    attempts: app.attempts(),
    evals: app.evals(),
    trainingRuns: app.trainingRuns(),
    proofs: app.runningProofs(),
    // paths an agent names stay inside the Lean project (KIMINA_LEAN_PROJECT, default the current folder)
    agents: () => (tools ??= app.agentToolbox(() => [app.settings.leanProject])),
    // the trainer calls back at the server's URL once it listens, with the server's token
    training: () => app.training({ backendUrl: o.backendUrl, token: () => o.token }),
    ...o,
  };
}

export interface Serving {
  http: Listening;
  url: string;
  stop(): Promise<void>;
}

export interface ServeOptions {
  host: string;
  port: number;
  routers?: ApiRouterFactory[];
  /** The token every route but health requires; default the configured one (KIMINA_API_TOKEN). */
  token?: string;
  /** Host names answered besides loopback ones (KIMINA_ALLOWED_HOSTS), when listening beyond loopback. */
  allowedHosts?: string[];
}

export async function startServing(app: App, o: ServeOptions): Promise<Serving> {
  const { settings } = app;
  const token = o.token ?? settings.apiToken;
  let url: string | undefined;
  const hooks = new CloseHooks();
  let http: Listening;
  try {
    const ctx = apiContextOf(app, { token, backendUrl: () => url, onClose: hooks.add });
    const express = await createApp(
      ctx,
      (o.routers ?? extraRouters).map((make) => () => make(ctx)),
      {
        token,
        allowedHosts: o.allowedHosts ?? settings.allowedHosts,
        debug: settings.debug,
      },
    );
    // a random token protects local use only: listening beyond loopback needs one the user chose
    http = await listen(express, o.host, o.port, settings.apiToken);
  } catch (err) {
    await hooks.run();
    await app.close();
    throw err;
  }
  url = http.url;
  let stopping: Promise<void> | undefined;
  return {
    http,
    url,
    stop: () =>
      (stopping ??= (async () => {
        await hooks.run(); // while HTTP still answers: requests in flight finish cancelled
        await http.close();
        await app.close();
      })()),
  };
}
