// `kimina serve`: the HTTP API (verification routes plus every mounted area) over the verifier pool.
import { resolve } from 'node:path';
import { apiTokenFromEnv, newApiToken } from '../api/auth';
import { extraRouters } from '../api/mounts';
import { CloseHooks, createApp, listen } from '../api/server';
import { env } from '../config';
import { buildVerifier, prewarm, verifierSettingsFromEnv } from '../lean/settings';
import { parseArgs, flagNumber, flagString } from './args';
import { removeDiscoveryFile, writeDiscoveryFile } from './serveDiscovery';

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

export async function run(args: string[]): Promise<number> {
  const p = parseArgs(args, ['help']);
  if (p.flags.has('help')) { console.log(help); return 0; }
  const host = flagString(p, 'host') ?? env.str('KIMINA_HOST', '127.0.0.1');
  const port = flagNumber(p, 'port') ?? env.num('KIMINA_PORT', 8000);
  const settings = verifierSettingsFromEnv();
  const project = flagString(p, 'project');
  if (project) settings.projectDir = resolve(project);
  const configuredToken = apiTokenFromEnv();
  const token = configuredToken ?? newApiToken();
  const allowedHosts = (flagString(p, 'allowed-hosts') ?? env.str('KIMINA_ALLOWED_HOSTS', '')).split(',').map((h) => h.trim()).filter(Boolean);
  const built = buildVerifier(settings);
  let url: string | undefined;
  const hooks = new CloseHooks();
  let http;
  try {
    const app = await createApp({ verifier: built.verifier, settings, backendUrl: () => url, token, onClose: hooks.add }, extraRouters, { token, allowedHosts });
    // a random token protects local use only: listening beyond loopback needs one the user chose
    http = await listen(app, host, port, configuredToken);
  } catch (err) {
    await hooks.run();
    await built.verifier.close();
    throw err;
  }
  url = http.url;
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
  const discovery = writeDiscoveryFile({ host, port: http.port, token });
  console.log(`Kimina backend listening on ${http.url}`);
  console.error(`lean: ${built.describe}; project ${settings.projectDir}`);
  console.error(`sandbox: ${built.sandbox.kind} (${built.sandbox.enforces}); API token required (${configuredToken ? 'KIMINA_API_TOKEN' : `random, in ${discovery?.path ?? 'serve.json'}`})`);
  prewarm(built, settings).then(
    () => { if (Object.keys(settings.initRepls).length) console.error('prewarm: REPLs ready'); },
    (err: unknown) => console.error(`prewarm failed: ${err instanceof Error ? err.message : String(err)}`),
  );
  const signal = await stopSignal;
  console.error(`kimina: ${signal}: shutting down (cancelling proofs, stopping REPLs)`);
  const again = (): void => { console.error('kimina: second signal: exiting now'); finish(1); };
  process.once('SIGINT', again);
  process.once('SIGTERM', again);
  const deadline = setTimeout(() => { console.error(`kimina: shutdown took over ${SHUTDOWN_DEADLINE_MS / 1000} s: exiting`); finish(1); }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  removeDiscoveryFile(discovery);
  await hooks.run(); // while HTTP still answers: requests in flight finish cancelled
  await http.close();
  await built.verifier.close();
  clearTimeout(deadline);
  // Everything this server owns is closed; what may still hold the event loop is not ours to wait for
  // (a detached trainer process), so exit shortly even then.
  setTimeout(() => finish(0), 300).unref();
  return 0;
}

function finish(code: number): void {
  process.exit(code);
}
