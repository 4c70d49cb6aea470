// The HTTP face of the backend (express 5): shared plumbing (the browser guard, auth, body limits, JSON
// errors), the verification routes, and whatever routers other areas pass in. Every route comes from the
// contract (backend/protocol/routes.ts, served through ./contract.ts).
import express, { type Express, type Router } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Settings } from '../settings/settings';
import type { BatchVerifier } from '../lean/verifier';
import type { Engine } from '../model/engine';
import type { RunningProofs } from '../prover/running';
import type { AttemptStore } from '../store/attempts';
import type { EvalStore } from '../store/eval';
import type { TrainingStore } from '../store/training';
import type { TrainingService } from '../training/service';
import type { AgentToolHandlers } from '../editor/agentToolbox';
import { requireToken } from './auth';
import { defaultBodyLimitBytes } from './body';
import { isLoopbackName, refuseBrowsers } from './browserGuard';
import { jsonErrorHandler, sendDetail } from './httpErrors';
import { verifyRouter } from './verifyRoutes';
import { astRouter } from './astRoutes';

/**
 * What the routers of `kimina serve` get from the composition root (backend/app/serve.ts apiContextOf builds it
 * from the App): every service required and typed; routers build none of their own.
 */
export interface ApiContext {
  verifier: BatchVerifier;
  /** The configured engine, loaded once on first use; it belongs to the app, which closes it. */
  engine: () => Promise<Engine>;
  /** The backend settings, read once. */
  settings: Settings;
  /** The app's stores, over its one database. */
  attempts: AttemptStore;
  evals: EvalStore;
  trainingRuns: TrainingStore;
  /** The one registry of running proofs. */
  proofs: RunningProofs;
  /** The app's training service, opened once on first use (runs resume when the training routes are mounted). */
  training: () => Promise<TrainingService>;
  /** The agent tools (the `/mcp` route), over the app's verifier, prove service and job list. */
  agents: () => AgentToolHandlers;
  /** The server's own URL once it listens, for processes it starts. */
  backendUrl: () => string | undefined;
  /** The API token this server requires (none: open), for processes it starts that call back (the trainer). */
  token: string | undefined;
  /**
   * Registers work to do when the server shuts down (stop running requests, close engines, detach jobs).
   * Hooks run together, while the HTTP server still answers, before the verifier closes.
   */
  onClose: (hook: CloseHook) => void;
}

export type CloseHook = () => void | Promise<void>;

/** What every router may rely on: the verifier behind the verification routes (tests mount routers with only it). */
export interface ServerBase {
  verifier: BatchVerifier;
}

/** A router to mount at the root; its own paths should start with `/v1/…`. */
export type RouterFactory = (base: ServerBase) => Router | Promise<Router>;
/** A router of `kimina serve` (backend/api/mounts.ts), made from the app's services. */
export type ApiRouterFactory = (ctx: ApiContext) => Router | Promise<Router>;

/** The close hooks routers register through ApiContext.onClose; `run` calls each once, logging failures. */
export class CloseHooks {
  private readonly hooks: CloseHook[] = [];
  readonly add = (hook: CloseHook): void => {
    this.hooks.push(hook);
  };

  async run(log: (line: string) => void = (line) => console.error(line)): Promise<void> {
    const hooks = this.hooks.splice(0);
    await Promise.all(
      hooks.map(async (hook) => {
        try {
          await hook();
        } catch (err) {
          log(`shutdown: ${err instanceof Error ? err.message : String(err)}`);
        }
      }),
    );
  }
}

/** The HTTP server's own options (not the App's, backend/app/app.ts AppOptions). */
export interface HttpOptions {
  /** Bearer token required on every route except health (`kimina serve`: KIMINA_API_TOKEN / LEAN_SERVER_API_KEY, else a random one). */
  token?: string;
  bodyLimitBytes?: number;
  /** Host names besides loopback ones that requests may name (the browser guard, ./browserGuard.ts). */
  allowedHosts?: string[];
  /** KIMINA_DEBUG: print unexpected errors with their stack. */
  debug?: boolean;
}

export async function createApp(
  ctx: ServerBase,
  extraRouters: RouterFactory[] = [],
  options: HttpOptions = {},
): Promise<Express> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('env', 'production'); // express's own last-resort handler then shows no stack trace
  app.locals.bodyLimitBytes = options.bodyLimitBytes ?? defaultBodyLimitBytes;
  app.use(refuseBrowsers({ allowedHosts: options.allowedHosts }));
  app.use(requireToken(options.token));
  app.use(verifyRouter(ctx.verifier));
  app.use(astRouter());
  for (const make of extraRouters) app.use(await make(ctx));
  app.use((req, res) => sendDetail(res, 404, `Not Found: ${req.method} ${req.path}`));
  app.use(jsonErrorHandler(options.debug ?? false));
  return app;
}

export function isLoopback(host: string): boolean {
  return isLoopbackName(host);
}

export interface Listening {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on host:port; refuses a non-loopback address unless a token protects the API. */
export function listen(app: Express, host: string, port: number, token: string | undefined): Promise<Listening> {
  if (!isLoopback(host) && !token) {
    return Promise.reject(
      new Error(
        `refusing to listen on ${host} without an API token: set KIMINA_API_TOKEN, or use KIMINA_HOST=127.0.0.1`,
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
      resolve({
        server,
        port: actual,
        url: `http://${shown}:${actual}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
