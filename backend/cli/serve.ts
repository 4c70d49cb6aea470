// `kimina serve`: the HTTP API (verification routes plus every mounted area) over the verifier pool.
import { resolve } from 'node:path';
import { apiTokenFromEnv } from '../api/auth';
import { extraRouters } from '../api/mounts';
import { CloseHooks, createApp, listen } from '../api/server';
import { env, kiminaHome } from '../config';
import { enterPrivateHome } from '../store/safePaths';
import { buildVerifier, prewarm, verifierSettingsFromEnv } from '../lean/settings';
import { parseArgs, flagNumber, flagString } from './args';
import { removeDiscoveryFile, writeDiscoveryFile } from './serveDiscovery';

const help = `usage: kimina serve [--host 127.0.0.1] [--port 8000] [--project DIR]

Starts the backend's HTTP API (kimina-lean-server compatible /api/check, /verify, /health; /v1/...).
Environment: KIMINA_HOST, KIMINA_PORT, KIMINA_LEAN_PROJECT, KIMINA_REPL_COMMAND, KIMINA_REPL_PATH,
KIMINA_API_TOKEN (or LEAN_SERVER_API_KEY), KIMINA_MAX_REPLS, KIMINA_INIT_REPLS; see docs/verifier.md.
While it runs, <KIMINA_HOME>/serve.json ({"url", "token"?, "pid"}, mode 0600) tells the editor where it is.
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
  enterPrivateHome(kiminaHome()); // 0700/0600 for what exists (older installs) and for what this server creates
  const token = apiTokenFromEnv();
  const built = buildVerifier(settings);
  let url: string | undefined;
  const hooks = new CloseHooks();
  let http;
  try {
    const app = await createApp({ verifier: built.admission, settings, backendUrl: () => url, onClose: hooks.add }, extraRouters, { token });
    http = await listen(app, host, port, token);
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
  console.error(`sandbox: ${built.sandbox.kind} (${built.sandbox.enforces})${token ? '; API token required' : ''}`);
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
