// The manifest's parts for agents against the code: each language-model tool's input schema is the agent tool's
// own (backend/protocol/agentTools.ts, as JSON Schema), the MCP server definition provider the manifest declares
// is the one the extension registers, the chat instructions file ships, and engines.vscode has the final MCP API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { agentTools, toJsonSchema, type AgentToolName } from '../../backend/protocol';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  contributes: {
    languageModelTools: { name: string; inputSchema: unknown; modelDescription: string }[];
    mcpServerDefinitionProviders: { id: string; label: string }[];
    chatInstructions: { path: string }[];
  };
};
const c = manifest.contributes;

test('each language-model tool takes exactly the arguments of its agent tool', () => {
  const names = c.languageModelTools.map((t) => t.name).sort();
  assert.deepEqual(names, ['kimina_check', 'kimina_job', 'kimina_prove']);
  for (const tool of c.languageModelTools) {
    const agentTool = tool.name.replace(/^kimina_/, '') as AgentToolName;
    assert.deepEqual(tool.inputSchema, toJsonSchema(agentTools[agentTool].input), tool.name);
    assert.ok(tool.modelDescription.length > 100, `${tool.name} tells the model when to use it`);
  }
  const source = readFileSync('extension/agents.ts', 'utf8');
  for (const name of names) assert.match(source, new RegExp(`\\b${name}: \\{\\n\\s+tool: '${name.slice(7)}'`), name);
});

test('the MCP provider, the chat instructions and the VS Code version they need', () => {
  assert.deepEqual(
    c.mcpServerDefinitionProviders.map((p) => p.id),
    ['kimina.mcpServers'],
  );
  assert.match(readFileSync('extension/agents.ts', 'utf8'), /const mcpProviderId = 'kimina\.mcpServers';/);
  for (const { path } of c.chatInstructions) assert.ok(existsSync(path), path);
  // lm.registerMcpServerDefinitionProvider and McpHttpServerDefinition are final API since VS Code 1.101
  assert.equal(manifest.engines.vscode, '^1.101.0');
  assert.equal(manifest.devDependencies['@types/vscode'], '1.101.0');
});
