// `kimina serve`: the HTTP API (verification routes plus every mounted area) over the verifier pool.
import { resolve } from 'node:path';
import { apiTokenFromEnv } from '../api/auth';
import { extraRouters } from '../api/mounts';
import { createApp, listen } from '../api/server';
import { env } from '../config';
import { buildVerifier, prewarm, verifierSettingsFromEnv } from '../lean/settings';
import { parseArgs, flagNumber, flagString } from './args';

const help = `usage: kimina serve [--host 127.0.0.1] [--port 8000] [--project DIR]

Starts the backend's HTTP API (kimina-lean-server compatible /api/check, /verify, /health; /v1/...).
Environment: KIMINA_HOST, KIMINA_PORT, KIMINA_LEAN_PROJECT, KIMINA_REPL_COMMAND, KIMINA_REPL_PATH,
KIMINA_API_TOKEN (or LEAN_SERVER_API_KEY), KIMINA_MAX_REPLS, KIMINA_INIT_REPLS; see docs/verifier.md.`;

export async function run(args: string[]): Promise<number> {
  const p = parseArgs(args, ['help']);
  if (p.flags.has('help')) { console.log(help); return 0; }
  const host = flagString(p, 'host') ?? env.str('KIMINA_HOST', '127.0.0.1');
  const port = flagNumber(p, 'port') ?? env.num('KIMINA_PORT', 8000);
  const settings = verifierSettingsFromEnv();
  const project = flagString(p, 'project');
  if (project) settings.projectDir = resolve(project);
  const token = apiTokenFromEnv();
  const built = buildVerifier(settings);
  let url: string | undefined;
  const app = await createApp({ verifier: built.verifier, settings, backendUrl: () => url }, extraRouters, { token });
  let http;
  try {
    http = await listen(app, host, port, token);
  } catch (err) {
    await built.verifier.close();
    throw err;
  }
  url = http.url;
  console.log(`Kimina backend listening on ${http.url}`);
  console.error(`lean: ${built.describe}; project ${settings.projectDir}`);
  console.error(`sandbox: ${built.sandbox.kind} (${built.sandbox.enforces})${token ? '; API token required' : ''}`);
  prewarm(built, settings).then(
    () => { if (Object.keys(settings.initRepls).length) console.error('prewarm: REPLs ready'); },
    (err: unknown) => console.error(`prewarm failed: ${err instanceof Error ? err.message : String(err)}`),
  );
  await new Promise<void>((resolveStop) => {
    const stop = (): void => { resolveStop(); };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  console.error('kimina: shutting down (stopping REPLs)');
  await http.close();
  await built.verifier.close();
  return 0;
}
