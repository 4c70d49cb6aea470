// `node --import tsx test/trainer/setup.ts`: creates the suite's Python environment ahead of the tests.
import { testPython } from './pythonSetup';

testPython().then(
  (python) => console.log(`trainer env ready: ${python}`),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
