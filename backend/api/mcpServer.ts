// The MCP face of the agent tools, on the official TypeScript SDK's low-level server: `tools/list` publishes the
// table of backend/protocol/agentTools.ts (arguments as JSON Schema), `tools/call` checks the arguments against the
// same schema and hands them to the toolbox (backend/editor/agentToolbox.ts). An answer is both structured content
// and its JSON as text (for clients that read only text). Transports: stdio (`kimina mcp`, backend/cli/mcp.ts) and
// streamable HTTP at `/mcp` (./mcpRoutes.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { agentTools, checkValue, toJsonSchema, type AgentToolName } from '../protocol';
import { AgentToolError, type AgentToolHandlers } from '../editor/agentToolbox';

/** Sent to the client at initialization: how to use the tools (the long form ships as agents/kimina-lean.md). */
const mcpInstructions =
  "Kimina checks Lean with a strict verifier and proves theorems with a local model. Call `check` after every edit of a Lean file and before saying a proof is done: only `ok: true` means Lean accepted exactly that text with no sorry, no error, only standard axioms, no native_decide, and no statement changed from the last commit or the reference. For a sorry you cannot close, `sorries` lists targets, `prove` starts a job (poll `job`; it takes minutes), and `apply` writes a proved job's proof. After a toolchain or Mathlib bump, `repair` a proof Lean now rejects.";

function agentToolList(): Tool[] {
  return (Object.entries(agentTools) as [AgentToolName, (typeof agentTools)[AgentToolName]][]).map(([name, spec]) => ({
    name,
    title: spec.title,
    description: spec.description,
    inputSchema: toJsonSchema(spec.input) as Tool['inputSchema'],
    annotations: {
      title: spec.title,
      readOnlyHint: spec.readOnly,
      destructiveHint: false,
      openWorldHint: false,
    },
  }));
}

const failed = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** An MCP server whose tools are the agent tools; `client` names the caller for the per-client job bound. */
export function createMcpServer(tools: AgentToolHandlers, client: () => string, version: string): Server {
  const server = new Server(
    { name: 'kimina', title: 'Kimina Prover', version },
    { capabilities: { tools: {} }, instructions: mcpInstructions },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: agentToolList() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    if (!Object.hasOwn(agentTools, name)) return failed(`unknown tool '${name}'`);
    const spec = agentTools[name as AgentToolName];
    const args = request.params.arguments ?? {};
    const problems = checkValue(spec.input, args);
    if (problems.length) return failed(`invalid arguments: ${problems.map((p) => p.text).join('; ')}`);
    try {
      const handler = tools[name as AgentToolName] as (a: unknown, c: string, s?: AbortSignal) => Promise<object>;
      const answer = await handler(args, client(), extra.signal);
      return {
        content: [{ type: 'text', text: JSON.stringify(answer, null, 2) }],
        structuredContent: answer as Record<string, unknown>,
      };
    } catch (err) {
      if (err instanceof AgentToolError) return failed(err.message);
      return failed(`${name} failed: ${(err as Error).message}`);
    }
  });
  return server;
}
