// kimina-ast-server's `/api/ast` and `/api/ast_code` (backend/protocol/ast.ts): not supported by this server.
// Both answer 501 with a JSON body naming the feature, since when this server says so, and what to use instead;
// the request is checked first, as kimina-ast-server's FastAPI would (422 on a malformed body).
import type { Response, Router } from 'express';
import type { AstNotSupportedResponse } from '../protocol';
import { serveRoutes } from './contract';
import { version } from '../../package.json';

/** The first version of this server that answers 501 on the AST routes (404 before). */
export const AST_NOT_SUPPORTED_SINCE = '0.1.0';

function astNotSupported(route: AstNotSupportedResponse['route']): AstNotSupportedResponse {
  const feature =
    route === '/api/ast'
      ? "the ASTs of existing modules (kimina-ast-server's POST /api/ast, kimina-ast-client's KiminaClient.ast)"
      : "the AST of a code snippet (kimina-ast-server's POST /api/ast_code, kimina-ast-client's KiminaClient.ast_code)";
  return {
    detail: `Not supported: ${route} — ${feature} needs kimina-ast-server's ast_export Lean tool and a Mathlib checkout, which this server (kimina-prover ${version}) does not run; not supported since ${AST_NOT_SUPPORTED_SINCE}`,
    error: 'not_supported',
    route,
    feature,
    notSupportedSince: AST_NOT_SUPPORTED_SINCE,
    instead:
      'POST /api/check with {"snippets": [{"id": …, "code": …}], "infotree": "original"} answers Lean\'s info trees (the REPL option), or run kimina-ast-server for ASTs',
  };
}

function send(res: Response, route: AstNotSupportedResponse['route']): void {
  res.status(501).json(astNotSupported(route));
}

export function astRouter(): Router {
  return serveRoutes({
    apiAst: (_input, _req, res) => send(res, '/api/ast'),
    apiAstCode: (_input, _req, res) => send(res, '/api/ast_code'),
  });
}
