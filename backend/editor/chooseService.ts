// Picks where proofs run: a running `kimina serve` (setting or discovery file) when there is one, so that
// background training and a shared REPL pool outlive the editor window; otherwise services in this process.
import { findServer, type ServerSettings } from './discovery';
import { HttpProveService } from './httpService';
import type { InProcessParts } from './inProcess';
import type { ProveService } from './service';

export async function chooseService(
  app: InProcessParts,
  settings: ServerSettings,
  log: (line: string) => void = () => {},
): Promise<ProveService> {
  const server = findServer(settings);
  if (server) {
    log(`forwarding proofs to ${server.url} (${server.source === 'setting' ? 'kimina.serverUrl' : 'discovery file'})`);
    return new HttpProveService(server);
  }
  log('running the prover in this process');
  const { createInProcessService } = await import('./inProcess');
  return createInProcessService(app, log);
}
