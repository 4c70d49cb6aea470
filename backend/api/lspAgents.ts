// The agent tools on the language-server face (`kimina lsp`, the editor's backend): the endpoint of its MCP
// server (streamable HTTP on loopback with a random token, started on first ask, for VS Code's MCP server
// definition provider), single tool calls (the extension's language-model tools), and the agents' job list with
// its changes as notifications (the Proof view lists them). The tools and jobs are the ones MCP clients reach.
import { randomBytes } from 'node:crypto';
import { ResponseError, ErrorCodes, type Connection } from 'vscode-languageserver/node';
import { agentTools, checkValue, type AgentEndpoint, type AgentToolName } from '../protocol';
import type { AgentJobs } from '../editor/agentJobs';
import { AgentToolError, type AgentToolHandlers } from '../editor/agentToolbox';
import { notifier, serveLspRequests } from './lspContract';
import { mcpOnlyApp } from './mcpRoutes';
import { listen, type Listening } from './server';

export interface AgentRequestsOptions {
  connection: Connection;
  /** The tools and their job list; absent: the requests answer that this backend serves none. */
  parts?: { tools: AgentToolHandlers; jobs: AgentJobs };
  log?: (line: string) => void;
}

export function registerAgentRequests({ connection, parts, log = () => {} }: AgentRequestsOptions): {
  close(): Promise<void>;
} {
  if (!parts) {
    const none = (): never => {
      throw new ResponseError(ErrorCodes.InvalidRequest, 'this backend serves no agent tools');
    };
    serveLspRequests(connection, { agentEndpoint: none, agentTool: none, agentJobs: none });
    return { close: async () => {} };
  }
  const { tools, jobs } = parts;
  const notify = notifier(connection);
  const unsubscribe = jobs.onChange((job) => notify('agentJob', job));
  let listening: Promise<{ http: Listening; endpoint: AgentEndpoint }> | undefined;
  const endpoint = (): Promise<{ http: Listening; endpoint: AgentEndpoint }> => {
    listening ??= (async () => {
      const token = randomBytes(24).toString('base64url');
      const http = await listen(
        mcpOnlyApp(() => tools, token),
        '127.0.0.1',
        0,
        token,
      );
      log(`MCP server for agents at ${http.url}/mcp`);
      return { http, endpoint: { url: `${http.url}/mcp`, token } };
    })();
    listening.catch(() => (listening = undefined));
    return listening;
  };

  serveLspRequests(connection, {
    agentEndpoint: async () => (await endpoint()).endpoint,
    agentTool: async (params, token) => {
      const name = params.name as AgentToolName;
      const problems = checkValue(agentTools[name].input, params.arguments);
      if (problems.length) throw new ResponseError(ErrorCodes.InvalidParams, problems.map((p) => p.text).join('; '));
      const controller = new AbortController();
      token?.onCancellationRequested(() => controller.abort());
      const handler = tools[name] as (a: unknown, c: string, s?: AbortSignal) => Promise<unknown>;
      try {
        // every language-model tool of this editor is one client (its agents share the window's share)
        return await handler(params.arguments, 'vscode-lm', controller.signal);
      } catch (err) {
        if (err instanceof AgentToolError) throw new ResponseError(ErrorCodes.InvalidRequest, err.message);
        throw err;
      }
    },
    agentJobs: () => ({ jobs: jobs.list() }),
  });

  return {
    async close() {
      unsubscribe();
      const open = await listening?.catch(() => undefined);
      await open?.http.close();
    },
  };
}
