// Which Node runs the backend, and what the first run says about this platform's package.
// kimina.nodePath empty (the default): VS Code's own runtime (`process.execPath` with ELECTRON_RUN_AS_NODE=1;
// VS Code 1.100's Electron 34 is Node 20), which loads the packaged native modules because all of them are N-API
// (libsql, onnxruntime-node, resvg). A set kimina.nodePath is used as given (Node 20 or newer).
// Pure functions of the platform and the extension folder, so tests build every platform's answer.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface BackendRuntime {
  command: string;
  /** Environment added for the backend process. */
  env: Record<string, string>;
  /** One line for the log. */
  describe: string;
}

export function backendRuntime(
  nodePath: string,
  host: { execPath: string; versions: NodeJS.ProcessVersions } = process,
): BackendRuntime {
  if (nodePath.trim())
    return { command: nodePath.trim(), env: {}, describe: `backend on ${nodePath.trim()} (kimina.nodePath)` };
  const electron = host.versions.electron;
  return {
    command: host.execPath,
    env: { ELECTRON_RUN_AS_NODE: '1' },
    describe: `backend on VS Code's own runtime (${electron ? `Electron ${electron}, ` : ''}Node ${host.versions.node}; set kimina.nodePath to use another Node 20+)`,
  };
}

/** Whether this installed package carries the in-process engine's native module (not in the darwin-x64 vsix). */
export function hasOnnxEngine(extensionDir: string): boolean {
  return existsSync(join(extensionDir, 'node_modules', 'onnxruntime-node', 'package.json'));
}

/**
 * The first-run notice of a package without the in-process engine (Intel Macs: onnxruntime-node 1.30 ships no
 * darwin-x64 binary), or null. It offers the OpenAI-compatible engine (Ollama, llama.cpp, vLLM, SGLang).
 */
export function missingEngineNotice(
  engine: string,
  onnxPresent: boolean,
  platform: string = process.platform,
  arch: string = process.arch,
): string | null {
  if (onnxPresent || (engine !== 'onnx' && engine !== 'auto')) return null; // auto runs onnx where llama.cpp is absent
  const where = platform === 'darwin' && arch === 'x64' ? 'on Intel Macs (darwin-x64)' : `on ${platform}-${arch}`;
  return (
    `Kimina: the in-process ONNX engine is not available ${where}: onnxruntime-node has no binary for it. ` +
    'Prove with an OpenAI-compatible server instead (Ollama, llama.cpp, vLLM or SGLang serving a Kimina-Prover model).'
  );
}
