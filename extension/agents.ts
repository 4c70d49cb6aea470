// Agents in VS Code reach the prover and the strict verifier with no setup, two ways:
// - MCP: an MCP server definition provider (`contributes.mcpServerDefinitionProviders`, final API since VS Code
//   1.101) naming the backend this extension already runs: `kimina lsp` serves the agent tools over streamable HTTP
//   on loopback with a random token (kimina/agent/endpoint), so agent mode lists "Kimina Prover" and its jobs share
//   the editor's backend, job list and Proof view;
// - language-model tools (`contributes.languageModelTools`, lm.registerTool): kimina_check, kimina_prove and
//   kimina_job for agents that take tools rather than MCP, each asking for confirmation first.
import * as vscode from 'vscode';
import { lspMethods, type AgentJob, type AgentToolName } from '../backend/protocol';
import type { Ctx } from './ctx';

const mcpProviderId = 'kimina.mcpServers';

type ToolInput = Record<string, unknown>;

function where(input: ToolInput): string {
  const path = typeof input.path === 'string' ? input.path : undefined;
  if (path) return `\`${path}\`${typeof input.theorem === 'string' ? ` (${input.theorem})` : ''}`;
  return 'the given Lean text';
}

/** The language-model tools: each relays to one agent tool of the backend (the same handlers as MCP). */
const lmTools: Record<
  string,
  { tool: AgentToolName; confirm: (input: ToolInput) => { title: string; message: string } }
> = {
  kimina_check: {
    tool: 'check',
    confirm: (input) => ({
      title: "Check with Lean (Kimina's strict verdict)",
      message: `Run Lean on ${where(input)} and report the strict verdict per declaration? Nothing is written.`,
    }),
  },
  kimina_prove: {
    tool: 'prove',
    confirm: (input) => ({
      title: 'Prove with Kimina',
      message: `Start a proof job on ${where(input)} with the local model? It runs in the background (minutes); the file is not written.`,
    }),
  },
  kimina_job: {
    tool: 'job',
    confirm: () => ({ title: 'Kimina proof job', message: "Read a Kimina proof job's state?" }),
  },
};

export function registerAgents(ctx: Ctx, onJobs: (jobs: AgentJob[]) => void): vscode.Disposable[] {
  const changed = new vscode.EventEmitter<void>();
  const version = String(vscode.extensions.getExtension('kimina-local.kimina-prover')?.packageJSON.version ?? '0');
  const out: vscode.Disposable[] = [changed];

  out.push(
    vscode.lm.registerMcpServerDefinitionProvider(mcpProviderId, {
      onDidChangeMcpServerDefinitions: changed.event,
      // called eagerly: asks the running backend where its MCP server listens (no prompt, nothing to install)
      provideMcpServerDefinitions: async () => {
        try {
          const endpoint = await ctx.request(lspMethods.agentEndpoint, {});
          if (!endpoint) return [];
          return [
            new vscode.McpHttpServerDefinition(
              'Kimina Prover',
              vscode.Uri.parse(endpoint.url),
              { Authorization: `Bearer ${endpoint.token}` },
              version,
            ),
          ];
        } catch (err) {
          ctx.log.info(`[extension] no MCP server for agents: ${(err as Error).message}`);
          return [];
        }
      },
    }),
    // a restarted backend listens on a new port with a new token
    ctx.onStarted(() => changed.fire()),
  );

  for (const [name, spec] of Object.entries(lmTools)) {
    out.push(
      vscode.lm.registerTool<ToolInput>(name, {
        prepareInvocation: (options) => {
          const { title, message } = spec.confirm(options.input);
          return {
            invocationMessage: `${title}…`,
            confirmationMessages: { title, message: new vscode.MarkdownString(message) },
          };
        },
        invoke: async (options, token) => {
          const answer = await ctx.request(
            lspMethods.agentTool,
            { name: spec.tool, arguments: options.input as Record<string, never> },
            token,
          );
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(answer))]);
        },
      }),
    );
  }

  // the Proof view lists agents' jobs: the list when the backend starts, then every change
  let jobs: AgentJob[] = [];
  const refresh = async () => {
    try {
      jobs = (await ctx.request(lspMethods.agentJobs, {})).jobs;
      onJobs(jobs);
    } catch {
      /* the backend is not running: nothing to list */
    }
  };
  out.push(
    ctx.onStarted(() => void refresh()),
    ctx.onAgentJob((job) => {
      jobs = [job, ...jobs.filter((j) => j.id !== job.id)].slice(0, 50);
      onJobs(jobs);
    }),
  );
  return out;
}
