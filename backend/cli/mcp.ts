// `kimina mcp`: the agent tools (backend/protocol/agentTools.ts) as an MCP server over stdio, for Claude Code,
// Codex, Cursor and any MCP client. One process per client: its jobs share the database (KIMINA_DB) with the
// editor's and `kimina serve`'s, so `job` answers for a job whichever of them ran it once it is stored.
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { version } from '../../package.json';
import { createMcpServer } from '../api/mcpServer';
import { openApp } from '../app/app';
import type { Settings } from '../settings/settings';
import { enterPrivateHome } from '../store/safePaths';
import { parseArgs, flagString } from './args';

const help = `usage: kimina mcp [--root DIR] [--project DIR] [--demo]

Serves the agent tools over MCP on stdin/stdout: check, sorries, prove, job, cancel, repair, apply
(docs/agents.md). Paths an agent names must be inside DIR (--root; default the Lean project,
KIMINA_LEAN_PROJECT, else the current folder). --project: the Lean project the REPLs run in.
--demo: TEST DOUBLES (scripted model, stand-in REPL), nothing is proved for real.

  claude mcp add kimina -- kimina mcp`;

export async function run(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['help', 'demo']);
  if (p.flags.has('help')) {
    console.log(help);
    return 0;
  }
  // stdout carries MCP messages only: anything else printed goes to stderr (the client's log)
  const toStderr = (...parts: unknown[]) => process.stderr.write(parts.map(String).join(' ') + '\n');
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  const log = (line: string) => process.stderr.write(`[kimina mcp] ${line}\n`);
  enterPrivateHome(settings.home);
  const project = flagString(p, 'project');
  const app = openApp({
    settings,
    log,
    demo: p.flags.has('demo'),
    verifier: project ? { leanProject: resolve(project) } : {},
  });
  const root = resolve(flagString(p, 'root') ?? project ?? settings.leanProject);
  let clientName = 'unnamed';
  const server = createMcpServer(
    app.agentToolbox(() => [root]),
    () => `mcp-stdio:${process.pid}|${clientName}`,
    version,
  );
  server.oninitialized = () => {
    const info = server.getClientVersion();
    if (info?.name && /^[\w.:@/ -]{1,64}$/.test(info.name)) clientName = info.name.replace(/ /g, '_');
  };
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((done) => {
    transport.onclose = () => done();
    process.stdin.on('end', () => done());
  });
  await server.connect(transport);
  log(`serving ${root} on stdio (pid ${process.pid})`);
  await closed;
  await server.close().catch(() => {});
  await app.close();
  return 0;
}
