// ProveService with the engine, the verifier pool and the prove loop in this process.
import type { ProveService } from './service';

export async function createInProcessService(_log: (line: string) => void): Promise<ProveService> {
  throw new Error('in-process proving is not in this build yet: start `kimina serve` and set kimina.serverUrl');
}
