// `/mcp` on `kimina serve`: the agent tools over MCP's streamable HTTP transport, behind the same browser guard
// and token as every route (createApp puts them in front). Stateless: each POST gets a fresh SDK server and
// transport and a plain JSON answer, so nothing is held open (an agent polls `job`, which answers at once); GET
// (a server-to-client stream) and DELETE (a session's end) answer 405 as the transport does without sessions.
import express, { type Express, type Request, type Response, type Router } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { version } from '../../package.json';
import { clientKey } from '../lean/admission';
import { serveRoutes } from './contract';
import { createMcpServer } from './mcpServer';
import type { ApiContext } from './server';
import type { AgentToolHandlers } from '../editor/agentToolbox';
import { requireToken } from './auth';
import { refuseBrowsers } from './browserGuard';
import { jsonErrorHandler, sendDetail } from './httpErrors';

function methodNotAllowed(res: Response): void {
  res
    .status(405)
    .set('Allow', 'POST')
    .json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this server keeps no session and sends nothing unasked' },
      id: null,
    });
}

/** `/mcp` on `kimina serve`, over the app's agent tools. */
export function mcpRouterFactory(ctx: ApiContext): Router {
  return mcpRouter(ctx.agents);
}

/**
 * The editor backend's own MCP server (`kimina lsp`, for VS Code's agents): only `/mcp`, behind the same browser
 * guard and token as `kimina serve`; to listen on loopback only (./server.ts `listen`).
 */
export function mcpOnlyApp(tools: () => AgentToolHandlers, token: string): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('env', 'production');
  app.use(refuseBrowsers());
  app.use(requireToken(token));
  app.use(mcpRouter(tools));
  app.use((req, res) => sendDetail(res, 404, `Not Found: ${req.method} ${req.path}`));
  app.use(jsonErrorHandler(false));
  return app;
}

function mcpRouter(tools: () => AgentToolHandlers): Router {
  return serveRoutes({
    mcp: async ({ body }, req: Request, res: Response) => {
      // the caller, for fair sharing and the per-client job bound: the route family and the remote address
      const client = clientKey('mcp', req.headers['x-kimina-client'], req.socket.remoteAddress);
      const server = createMcpServer(tools(), () => client, version);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
    mcpStream: (_input, _req, res) => methodNotAllowed(res),
    mcpSessionEnd: (_input, _req, res) => methodNotAllowed(res),
  });
}
