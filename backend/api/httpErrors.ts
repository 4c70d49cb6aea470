// JSON errors for every route: the typed errors handlers throw, how each route's error style renders a
// problem (backend/protocol/routes.ts ErrorStyle), and the one Express error handler. No answer repeats
// the request body or carries a stack trace.
import type { ErrorRequestHandler, Response } from 'express';
import { errorKindOf, type ErrorKind, type ErrorStyle, type Problem } from '../protocol';
import { BatchTooLarge, QueueFull } from '../lean/errors';

/** FastAPI's entry in a 422 `detail` list. */
interface FieldProblem {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/** A request that does not match its route's schema: 422 (fastapi, error styles) or 400 (detail style). */
export class ValidationError extends Error {
  constructor(
    readonly problems: Problem[],
    readonly where: 'body' | 'query' = 'body',
  ) {
    super(problems.map((p) => p.text).join('; '));
    this.name = 'ValidationError';
  }
}

/** An error with an HTTP status and a plain `detail` text. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Sends `{ detail }`, with the error's kind (protocol/errors.ts) beside it when it has one. */
export function sendDetail(
  res: Response,
  status: number,
  detail: unknown,
  headers: Record<string, string> = {},
  kind?: ErrorKind,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res
    .status(status)
    .set(headers)
    .json(kind ? { detail, kind } : { detail });
}

/** A plain message (or typed problems) in the route's style. */
export function sendStyled(
  res: Response,
  style: ErrorStyle,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  kind?: ErrorKind,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res
    .status(status)
    .set(headers)
    .json({ ...(style === 'error' ? { error: message } : { detail: message }), ...(kind ? { kind } : {}) });
}

export function sendProblems(res: Response, style: ErrorStyle, err: ValidationError): void {
  if (style === 'fastapi') {
    sendDetail(
      res,
      422,
      err.problems.map((p): FieldProblem => ({ type: p.type, loc: [err.where, ...p.loc], msg: p.msg })),
    );
    return;
  }
  sendStyled(res, style, style === 'error' ? 422 : 400, err.problems[0]?.text ?? 'bad request');
}

/** The last handler: every error answered as JSON; `debug` (KIMINA_DEBUG) also prints unexpected ones with their stack. */
export const jsonErrorHandler =
  (debug: boolean): ErrorRequestHandler =>
  (err: unknown, _req, res, _next) => {
    try {
      if (err instanceof ValidationError) return sendProblems(res, 'fastapi', err);
      if (err instanceof QueueFull)
        return sendDetail(res, 429, err.message, { 'Retry-After': String(err.retryAfterS) });
      if (err instanceof BatchTooLarge) return sendDetail(res, 413, err.message);
      const kind = errorKindOf(err); // what is missing (a model, Lean, the trainer), for the caller's remedy
      if (err instanceof HttpError) return sendDetail(res, err.status, err.message, err.headers, kind);
      if (debug) console.error(err);
      const message = err instanceof Error ? err.message : String(err);
      return sendDetail(res, 500, `Internal server error: ${message.split('\n')[0].slice(0, 300)}`, {}, kind);
    } catch {
      // whatever went wrong while answering, the answer stays JSON
      if (!res.headersSent) res.status(500).type('application/json').end('{"detail":"Internal server error"}');
      else res.end();
    }
  };
