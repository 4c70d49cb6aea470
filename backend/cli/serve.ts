// `kimina serve`: the HTTP API (verification routes plus every mounted area) over the verifier pool.
import { resolve } from 'node:path';
import { newApiToken } from '../api/auth';
import { openApp } from '../app/app';
import { startServing } from '../app/serve';
import type { Settings } from '../settings/settings';
import { enterPrivateHome } from '../store/safePaths';
import { prewarm } from '../lean/buildVerifier';
import { parseArgs, flagNumber, flagString } from './args';
import { removeDiscoveryFile, writeDiscoveryFile } from './serveDiscovery';
import { discoveryPath } from '../editor/discovery';

const help = `usage: kimina serve [--host 127.0.0.1] [--port 8000] [--project DIR] [--allowed-hosts NAME,...]

Starts the backend's HTTP API (kimina-lean-server compatible /api/check, /verify, /health; /v1/...).
Environment: KIMINA_HOST, KIMINA_PORT, KIMINA_LEAN_PROJECT, KIMINA_REPL_COMMAND, KIMINA_REPL_PATH,
KIMINA_API_TOKEN (or LEAN_SERVER_API_KEY), KIMINA_ALLOWED_HOSTS, KIMINA_MAX_REPLS, KIMINA_INIT_REPLS; see docs/verifier.md.
Every request needs the API token (Authorization: Bearer …) except /health: KIMINA_API_TOKEN when set, else a
random one. While it runs, <KIMINA_HOME>/serve.json ({"url", "token", "pid"}, mode 0600) tells the editor, the
CLI and other local clients where it is and the token (LEAN_SERVER_API_KEY=$(jq -r .token ~/.kimina/serve.json)).
Requests must name the server in Host (loopback names, or --allowed-hosts when listening elsewhere); requests
from web pages (an Origin header) and POSTs that are not application/json are refused.
SIGINT/SIGTERM stop it: running proofs are cancelled, training runs are left to resume on the next start.`;

/** How long shutdown may take before the process exits anyway (a second signal exits at once). */
const SHUTDOWN_DEADLINE_MS = 10_000;

export async function run(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['help']);
  if (p.flags.has('help')) {
    console.log(help);
    return 0;
  }
  const host = flagString(p, 'host') ?? settings.host;
  const port = flagNumber(p, 'port') ?? settings.port;
  const project = flagString(p, 'project');
  enterPrivateHome(settings.home); // 0700/0600 for what exists (older installs) and for what this server creates
  const app = openApp({ settings, verifier: project ? { leanProject: resolve(project) } : {} });
  // always a token: the configured one, else a random one that only local clients learn (from serve.json)
  const token = settings.apiToken ?? newApiToken();
  const allowedHosts =
    flagString(p, 'allowed-hosts')
      ?.split(',')
      .map((h) => h.trim())
      .filter(Boolean) ?? settings.allowedHosts;
  const serving = await startServing(app, { host, port, token, allowedHosts });
  const { http } = serving;
  const built = app.verifier();
  const verifierSettings = app.verifierSettings();
  // Signal handlers go in before the URL is printed: whoever reads it may stop us right away.
  const stopSignal = new Promise<NodeJS.Signals>((resolveStop) => {
    const stop = (received: NodeJS.Signals): void => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      resolveStop(received);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const discovery = writeDiscoveryFile({ host, port: http.port, token }, discoveryPath(settings.home));
  console.log(`Kimina backend listening on ${http.url}`);
  console.error(`lean: ${built.describe}; project ${verifierSettings.leanProject}`);
  console.error(
    `sandbox: ${built.sandbox.kind} (${built.sandbox.enforces}); API token required (${settings.apiToken ? 'KIMINA_API_TOKEN' : `random, in ${discovery?.path ?? 'serve.json'}`})`,
  );
  prewarm(built, verifierSettings).then(
    () => {
      if (Object.keys(verifierSettings.initRepls).length) console.error('prewarm: REPLs ready');
    },
    (err: unknown) => console.error(`prewarm failed: ${err instanceof Error ? err.message : String(err)}`),
  );
  const signal = await stopSignal;
  console.error(`kimina: ${signal}: shutting down (cancelling proofs, stopping REPLs)`);
  const again = (): void => {
    console.error('kimina: second signal: exiting now');
    finish(1);
  };
  process.once('SIGINT', again);
  process.once('SIGTERM', again);
  const deadline = setTimeout(() => {
    console.error(`kimina: shutdown took over ${SHUTDOWN_DEADLINE_MS / 1000} s: exiting`);
    finish(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  removeDiscoveryFile(discovery);
  await serving.stop(); // cancels running work, closes HTTP, then the engine, the verifier pool and the store
  clearTimeout(deadline);
  // Everything this server owns is closed; what may still hold the event loop is not ours to wait for
  // (a detached trainer process), so exit shortly even then.
  setTimeout(() => finish(0), 300).unref();
  return 0;
}

function finish(code: number): void {
  process.exit(code);
}
