// Serving the route table (backend/protocol/routes.ts): each area hands its handlers, keyed by route name, to
// `serveRoutes`, which registers the declared method and paths, reads the JSON body, checks body and query
// against the declared schemas and answers problems in the route's error style. A handler only ever sees
// input that matches its schema. Nothing registers an HTTP route any other way (test/api/contract.test.ts).
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import {
  checkValue,
  coerceQuery,
  errorKindOf,
  routes,
  type ErrorStyle,
  type RouteBody,
  type RouteName,
  type RouteParams,
  type RouteQuery,
  type RouteSpec,
} from '../protocol';
import { defaultBodyLimitBytes, readJsonBody } from './body';
import { sendProblems, sendStyled, ValidationError } from './httpErrors';

interface RouteInput<N extends RouteName> {
  body: RouteBody<N>;
  query: RouteQuery<N>;
  params: RouteParams<N>;
}

/**
 * Answers a request whose input matches the route's schemas. What it returns is sent as JSON (unless it
 * answered itself); what it throws goes to `mapError`, else to the app's error handler.
 */
type RouteHandler<N extends RouteName> = (input: RouteInput<N>, req: Request, res: Response) => unknown;
export type RouteHandlers = { [N in RouteName]?: RouteHandler<N> };

/** A thrown error as a status and a message in the route's style, or undefined to pass it on. */
export type ErrorMapper = (err: unknown) => { status: number; message: string } | undefined;

const maxParamChars = 500;

/** The body limit createApp sets for every router (`app.locals`), else the default. */
export function bodyLimit(req: Request): number {
  const limit = (req.app?.locals as { bodyLimitBytes?: unknown } | undefined)?.bodyLimitBytes;
  return typeof limit === 'number' ? limit : defaultBodyLimitBytes;
}

function failBody(res: Response, style: ErrorStyle, failure: { status: number; kind: string; message: string }): void {
  if (failure.kind === 'json_invalid') {
    if (style === 'fastapi') {
      res.status(422).json({ detail: [{ type: 'json_invalid', loc: ['body'], msg: failure.message }] });
      return;
    }
    sendStyled(res, style, 400, `the body is not valid JSON: ${failure.message}`);
    return;
  }
  sendStyled(res, style, failure.status, failure.message, failure.status === 413 ? { Connection: 'close' } : {});
}

function register<N extends RouteName>(
  router: Router,
  name: N,
  handler: RouteHandler<N>,
  mapError?: ErrorMapper,
): void {
  const spec: RouteSpec = routes[name];
  const paths = [spec.path, ...(spec.aliases ?? [])];
  const run = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    // ids and names are short: a longer path segment names nothing here (and is not repeated back)
    if (Object.values(req.params).some((v) => typeof v === 'string' && v.length > maxParamChars)) {
      sendStyled(res, spec.errors, 404, `Not Found: a path parameter is longer than ${maxParamChars} characters`);
      return;
    }
    let body: unknown;
    if (spec.method === 'POST') {
      const read = await readJsonBody(req, bodyLimit(req));
      if (!read.ok) {
        failBody(res, spec.errors, read.failure);
        return;
      }
      body = read.value;
      if (spec.body) {
        const problems = checkValue(spec.body, body);
        if (problems.length) {
          sendProblems(res, spec.errors, new ValidationError(problems));
          return;
        }
      }
    }
    let query: unknown;
    if (spec.query) {
      query = coerceQuery(spec.query, req.query as Record<string, unknown>);
      const problems = checkValue(spec.query, query);
      if (problems.length) {
        sendProblems(res, spec.errors, new ValidationError(problems, 'query'));
        return;
      }
    }
    try {
      const input = { body, query, params: req.params } as RouteInput<N>;
      const out = await handler(input, req, res);
      if (out !== undefined && !res.headersSent) res.json(out);
    } catch (err) {
      const mapped = mapError?.(err);
      if (mapped && !res.headersSent) sendStyled(res, spec.errors, mapped.status, mapped.message, {}, errorKindOf(err));
      else next(err);
    }
  };
  const method = spec.method === 'GET' ? 'get' : spec.method === 'POST' ? 'post' : 'delete';
  router[method](paths, run);
}

/** Registers each given handler at its declared route on `router` (a new one by default). */
export function serveRoutes(
  handlers: RouteHandlers,
  options: { router?: Router; mapError?: ErrorMapper } = {},
): Router {
  const router = options.router ?? express.Router();
  for (const name of Object.keys(handlers) as RouteName[]) {
    const handler = handlers[name];
    if (handler) register(router, name, handler as RouteHandler<typeof name>, options.mapError);
  }
  return router;
}
