// JSON errors for every route, in FastAPI's shape (`{"detail": …}`) as kimina-lean-server answers,
// and the one Express error handler that maps typed errors to status codes.
import type { ErrorRequestHandler, Response } from 'express';
import { setting } from '../app/settings';
import { QueueFull } from '../lean/errors';

export interface FieldProblem { type: string; loc: (string | number)[]; msg: string; input?: unknown }

/** A request body that does not match the schema: HTTP 422 with one entry per problem. */
export class ValidationError extends Error {
  constructor(readonly problems: FieldProblem[]) {
    super(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '));
    this.name = 'ValidationError';
  }
}

/** An error with an HTTP status and a plain `detail` text. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
  }
}

export function sendDetail(res: Response, status: number, detail: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) { res.end(); return; }
  res.status(status).set(headers).json({ detail });
}

export const jsonErrorHandler: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
  if (err instanceof ValidationError) return sendDetail(res, 422, err.problems);
  if (err instanceof QueueFull) return sendDetail(res, 429, err.message, { 'Retry-After': String(err.retryAfterS) });
  if (err instanceof HttpError) return sendDetail(res, err.status, err.message, err.headers);
  const message = err instanceof Error ? err.message : String(err);
  if (setting('debug')) console.error(err);
  return sendDetail(res, 500, `Internal server error: ${message}`);
};
