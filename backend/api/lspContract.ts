// Serving the custom LSP requests (backend/protocol/lsp.ts): each part of the face hands its handlers, keyed by
// the request's name in the table, to `serveLspRequests`, which registers the declared method and checks the
// parameters against the declared schema before the handler runs (a problem answers InvalidParams with its
// sentence). A handler's error of a kind (protocol/errors.ts) answers with that kind in the ResponseError's `data`. A handler only ever sees parameters that match its schema. Nothing registers a custom request any
// other way (test/api/lspContract.test.ts); notifications go out through `notifier`, typed by the table.
import { type CancellationToken, type Connection, ErrorCodes, ResponseError } from 'vscode-languageserver/node';
import {
  checkValue,
  errorKindOf,
  type LspErrorData,
  lspNotifications,
  lspRequests,
  type LspNotificationName,
  type LspNotificationTypes,
  type LspRequestName,
  type LspRequests,
  type LspRequestTypes,
} from '../protocol';

type LspParams<N extends LspRequestName> = LspRequestTypes[LspRequests[N]['method']]['params'];
type LspResult<N extends LspRequestName> = LspRequestTypes[LspRequests[N]['method']]['result'];
export type LspHandler<N extends LspRequestName> = (
  params: LspParams<N>,
  token: CancellationToken,
) => LspResult<N> | Promise<LspResult<N>>;
export type LspHandlers = { [N in LspRequestName]?: LspHandler<N> };

/** The problems of a request's parameters as one sentence, or null when they match the schema. */
function paramsProblem(name: LspRequestName, params: unknown): string | null {
  const problems = checkValue(lspRequests[name].params, params);
  return problems.length ? problems.map((p) => p.text).join('; ') : null;
}

/** Registers each given handler at its declared method; parameters are checked first (absent ones count as `{}`). */
export function serveLspRequests(connection: Connection, handlers: LspHandlers): void {
  for (const name of Object.keys(handlers) as LspRequestName[]) {
    const handler = handlers[name] as LspHandler<LspRequestName> | undefined;
    if (!handler) continue;
    const method: string = lspRequests[name].method;
    connection.onRequest(method, async (raw: unknown, token: CancellationToken): Promise<unknown> => {
      const params = raw ?? {};
      const problem = paramsProblem(name, params);
      if (problem) throw new ResponseError(ErrorCodes.InvalidParams, problem);
      try {
        return await handler(params as LspParams<LspRequestName>, token);
      } catch (err) {
        // an error of a kind (a model, Lean, the trainer missing) keeps it in `data`; the words are the library's
        const kind = errorKindOf(err);
        if (!kind || err instanceof ResponseError) throw err;
        throw new ResponseError<LspErrorData>(
          ErrorCodes.InternalError,
          `Request ${method} failed with message: ${(err as Error).message}`,
          { kind },
        );
      }
    });
  }
}

/** Sends a declared notification with its declared parameters. */
export function notifier(connection: Connection) {
  return <N extends LspNotificationName>(
    name: N,
    params: LspNotificationTypes[(typeof lspNotifications)[N]['method']],
  ) => void connection.sendNotification(lspNotifications[name].method, params);
}
