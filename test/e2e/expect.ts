// Retries an assertion until it passes or the step timeout runs out (the DOM updates asynchronously).
import { stepTimeout } from './harness';

export async function expect(check: () => Promise<void>, timeout = stepTimeout): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
