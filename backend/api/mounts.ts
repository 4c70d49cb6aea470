// Routers other areas add to `kimina serve` (prove, training, evaluation). SHARED REGISTRY: each area
// appends one entry here and owns its own router file; server.ts and serve.ts need no edits.
import type { ApiRouterFactory } from './server';
import { proveRouterFactory } from './proveRoutes';
import { evalRouterFactory } from './evalRoutes';
import { trainingRouterFactory } from './trainingMount';
import { mcpRouterFactory } from './mcpRoutes';

export const extraRouters: ApiRouterFactory[] = [
  proveRouterFactory, // POST /v1/prove, DELETE|GET /v1/prove/:id (prover)
  evalRouterFactory, // GET /v1/eval/runs[/:name[/…]] (evaluation)
  trainingRouterFactory, // /v1/training/… runs, metrics (SSE), reward service (training)
  mcpRouterFactory, // POST /mcp: the agent tools over MCP (agents)
];
