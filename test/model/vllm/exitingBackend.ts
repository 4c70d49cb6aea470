// A backend that starts a vLLM server (the stand-in's, see standInSetup.ts) and exits without stopping it: prints
// the server's and its engine core's pids and its socket folder as one JSON line first, so the test can check that none outlives it.
import { VllmServer } from '../../../backend/model/vllm/server';
import { engineCorePids, makeRig, serverOptions } from './standInSetup';

async function main(): Promise<void> {
  const rig = makeRig();
  const logs: string[] = [];
  const server = await VllmServer.start(serverOptions(rig, logs));
  console.log(JSON.stringify({ pids: [server.pid, ...engineCorePids(logs)], socketDir: server.socketDir }));
  process.exit(0);
}

void main();
