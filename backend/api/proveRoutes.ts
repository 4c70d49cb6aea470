// HTTP face of the prove loop: `POST /v1/prove` (JSON answer, or server-sent events with
// `Accept: text/event-stream`), `DELETE /v1/prove/:id` to cancel, `GET /v1/prove/:id` for a stored run,
// `GET /v1/prove?limit=N` for the most recent runs.
// Closing the connection cancels the request too.
import type { Request, Response, Router } from 'express';
import { errorKindOf, type ProveEvent, type ProveRequestBody, type ProveResult } from '../protocol';
import { prove, proveStatement, type ProveDeps } from '../prover/prove';
import { ProveRequestError, parseProveRequest } from '../prover/request';
import { serveRoutes } from './contract';
import { randomUUID } from 'node:crypto';
import { openSse, type SseStream } from './sseWriter';
import type { AttemptStore } from '../store/attempts';
import { LazyStart, type RunningProofs } from '../prover/running';
import type { ApiContext } from './server';
import { publishedResult } from '../editor/publishedTactics';

/** The loop's dependencies, or a function that makes them on first use (so the server starts before the model loads). */
export type ProveRouterDeps = ProveDeps | (() => ProveDeps | Promise<ProveDeps>);

function wantsStream(req: Request): boolean {
  return (req.headers.accept ?? '').split(',').some((part) => part.trim().startsWith('text/event-stream'));
}

export interface ProveRouterOptions {
  /** The registry of running proofs: the app's one (ApiContext.proofs), shared with the language server. */
  proofs: RunningProofs;
  /** Where `GET /v1/prove/:id` reads stored runs (default: the store in `deps`, when they are an object). */
  store?: AttemptStore;
  /**
   * Where the router registers its shutdown (ApiContext.onClose): running requests are cancelled and awaited,
   * new ones refused, and an engine that a deps function made is closed.
   */
  onClose?: (hook: () => Promise<void>) => void;
  /** Close an engine that a deps function made when the router shuts down (default true; false when the caller owns it). */
  closeEngine?: boolean;
  /** How long shutdown waits for cancelled requests to answer (a Lean check in flight does not stop early). Default 1000 ms. */
  closeGraceMs?: number;
}

export function createProveRouter(deps: ProveRouterDeps, options: ProveRouterOptions): Router {
  const readStore = options.store ?? (typeof deps === 'function' ? undefined : deps.store);
  const running = options.proofs;
  const handlers = new Set<Promise<void>>();
  let closing = false;
  const made = typeof deps === 'function' ? new LazyStart(async () => deps()) : null;
  const getDeps = (): Promise<ProveDeps> => (made ? made.get() : Promise.resolve(deps as ProveDeps));

  const handleProve = async (raw: ProveRequestBody, req: Request, res: Response): Promise<void> => {
    let body;
    try {
      body = parseProveRequest(raw);
      await proveStatement(body.code, body.theorem); // a missing theorem is a 422, even before a stream starts
    } catch (err) {
      res.status(422).json({ error: (err as Error).message });
      return;
    }
    const id = body.id ?? randomUUID();
    const controller = running.begin(id);
    if (!controller) {
      res.status(409).json({ error: `a prove request with id '${id}' is already running` });
      return;
    }
    // The response closing before the answer is written means the client went away: stop the work.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const sse: SseStream | null = wantsStream(req) ? openSse(req, res) : null;
    let errorStreamed = false;
    const onEvent = (e: ProveEvent) => {
      if (e.type === 'error') errorStreamed = true;
      if (e.type === 'done') return; // sent below, once `tactics` is what the splice rule would write
      sse?.send(e.type, e);
    };
    try {
      const proveDeps = await getDeps();
      const raw: ProveResult = await prove({ ...body, id }, proveDeps, onEvent, controller.signal);
      const result = await publishedResult(
        raw,
        (code, signal) => proveDeps.verifier.check(code, { signal }),
        controller.signal,
      );
      if (sse) {
        sse.send('done', { type: 'done', id, result });
        sse.close();
      } else res.json(result);
    } catch (err) {
      const message = (err as Error).message;
      if (sse) {
        // prove() streams an `error` event for failures inside the loop; setup failures have not been sent yet.
        if (!errorStreamed) sse.send('error', { type: 'error', id, message, kind: errorKindOf(err) });
        sse.close();
      } else if (!res.headersSent)
        res.status(err instanceof ProveRequestError ? 422 : 500).json({ error: message, kind: errorKindOf(err) });
    } finally {
      running.end(id, controller);
    }
  };

  const router = serveRoutes({
    prove: ({ body }, req, res) => {
      if (closing) {
        res.status(503).json({ error: 'the server is shutting down' });
        return;
      }
      const handled = handleProve(body, req, res).finally(() => handlers.delete(handled));
      handlers.add(handled);
      return handled;
    },
    proveCancel: ({ params }, _req, res) => {
      if (!running.cancel(params.id)) {
        res.status(404).json({ error: `no running prove request with id '${params.id.slice(0, 100)}'` });
        return;
      }
      res.status(202).json({ id: params.id, cancelled: true });
    },
    proveRuns: ({ query }) => ({
      runs: (readStore?.recentRuns(query.limit ?? 20) ?? []).map((run) => ({ ...run, running: running.has(run.id) })),
    }),
    proveRun: ({ params }, _req, res) => {
      const store = readStore;
      const run = store?.getRun(params.id);
      if (!store || !run) {
        res.status(404).json({ error: `no stored prove run with id '${params.id.slice(0, 100)}'` });
        return;
      }
      return { ...run, running: running.has(params.id), attempts: store.attemptsOf(params.id) };
    },
  });

  options.onClose?.(async () => {
    closing = true;
    running.cancelAll();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => {
      timer = setTimeout(r, options.closeGraceMs ?? 1000);
    });
    await Promise.race([Promise.allSettled([...handlers]), grace]);
    clearTimeout(timer);
    // An engine made here on first use belongs to the router; one passed in belongs to the caller.
    if (made?.current && options.closeEngine !== false) {
      const started = await made.current.catch(() => null);
      await started?.engine.close();
    }
  });
  return router;
}

/**
 * For `kimina serve` (backend/api/mounts.ts): the server's verifier, the app's engine (loaded on the first
 * prove request, so the server starts at once; the app closes it) and the attempt store in the app's database.
 */
export function proveRouterFactory(ctx: ApiContext): Router {
  const { attempts: store, engine } = ctx;
  return createProveRouter(async () => ({ engine: await engine(), verifier: ctx.verifier, store }), {
    store,
    proofs: ctx.proofs,
    onClose: ctx.onClose,
    closeEngine: false,
  });
}
