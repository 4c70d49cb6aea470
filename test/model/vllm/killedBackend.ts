// A backend that starts a vLLM server (the stand-in's, see standInSetup.ts) and is then killed outright (SIGKILL:
// no exit hook runs, as when Node crashes or the OOM killer ends it): prints the server's and its engine core's
// pids and its socket folder as one JSON line first, so the test can check that none outlives it.
import { VllmServer } from '../../../backend/model/vllm/server';
import { engineCorePids, makeRig, serverOptions } from './standInSetup';

async function main(): Promise<void> {
  const rig = makeRig();
  const logs: string[] = [];
  const server = await VllmServer.start(serverOptions(rig, logs, {}, { stopGraceMs: 500 }));
  process.stdout.write(
    `${JSON.stringify({ pids: [server.pid, ...engineCorePids(logs)], socketDir: server.socketDir })}\n`,
    () => process.kill(process.pid, 'SIGKILL'),
  );
}

void main();
