// kimina-ast-server's AST routes, as kimina-ast-client 0.2.2 (a fork of kimina-client that installs under the
// name `kimina_client`) calls them: `KiminaClient.ast(modules, one=True, timeout=60)` posts `POST /api/ast`
// {modules, one, timeout}; `KiminaClient.ast_code(code, module="User.Code", timeout=60)` posts
// `POST /api/ast_code` {code, module, timeout}; both read an AstModuleResponse. The server behind them runs an
// `ast_export` Lean tool over a local Mathlib checkout, which this backend does not have: it answers both with
// 501 and the body below, so that a client learns why instead of reading a bare 404.
import { s } from './schema';
import { verifyLimits } from './verify';

const moduleName = s.string({ min: 1, max: 1000 });
const astTimeout = s.optional(s.integer({ min: 1, max: verifyLimits.timeoutS }));

/** `POST /api/ast`: the ASTs of modules that already exist (Mathlib, Lean.Elab.Frontend, …). */
export const astRequestSchema = s.object({
  modules: s.array(moduleName, { min: 1, max: 1000 }),
  one: s.optional(s.boolean()),
  timeout: astTimeout,
});

/** `POST /api/ast_code`: the AST of a snippet compiled as a temporary module. */
export const astCodeRequestSchema = s.object({
  code: s.string({ max: verifyLimits.snippetChars }),
  module: s.optional(moduleName),
  timeout: astTimeout,
});

/** The 501 answer of both routes: what is not supported, who offers it, since when this server says so. */
export interface AstNotSupportedResponse {
  /** One sentence, as FastAPI servers put it in `detail`, so kimina_client shows it. */
  detail: string;
  error: 'not_supported';
  route: '/api/ast' | '/api/ast_code';
  /** The feature and the server that has it. */
  feature: string;
  /** This server's first version that answers 501 here (before: 404). */
  notSupportedSince: string;
  /** What a user can use instead. */
  instead: string;
}
