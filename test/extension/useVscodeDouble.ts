// Makes `import * as vscode from 'vscode'` in extension/ load the TEST DOUBLE (vscodeDouble.ts) under
// `node --import tsx --test`: the tests run as CommonJS, so a hook on node's module resolution is enough. A test
// file imports this first, before anything from extension/.
import Module from 'node:module';

const doublePath = require.resolve('./vscodeDouble');
const resolver = Module as unknown as { _resolveFilename(request: string, ...rest: unknown[]): string };
const original = resolver._resolveFilename;
resolver._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  return request === 'vscode' ? doublePath : original.call(this, request, ...rest);
};
