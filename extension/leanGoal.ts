// The goal at the cursor from the official Lean 4 extension (leanprover.lean4), when it is installed: its
// language client answers Lean's `$/lean/plainGoal` request for the file the user is in, so the Proof view shows
// the same goal as the InfoView. Shapes from leanprover/vscode-lean4 at 5a25e6a (2026-07-29):
//  - vscode-lean4/src/exports.ts: the extension's exports are `Exports { lean4EnabledFeatures: Promise<{
//    clientProvider, infoProvider, projectOperationProvider }> }`;
//  - vscode-lean4/src/utils/clientProvider.ts: `getActiveClient(): LeanClient | undefined` (the client of the
//    last active Lean editor);
//  - vscode-lean4/src/leanclient.ts: `LeanClient.sendRequest(method, params, token?)`, which rejects with
//    'No connection to Lean' when the server is not running;
//  - lean4-infoview/src/infoview/editorConnection.ts: `requestPlainGoal` sends `$/lean/plainGoal` with
//    TextDocumentPositionParams; lean4-infoview-api/src/lspTypes.ts: `PlainGoal { rendered: string; goals: string[] }`
//    (the answer is null/undefined where there is no tactic goal).
// No VS Code API in this file (extension/main.ts hands in the extension's exports), so tests can give a double.

/** The part of vscode-lean4's exports this uses. */
export interface Lean4Exports {
  lean4EnabledFeatures: Promise<{
    clientProvider: {
      getActiveClient():
        { sendRequest(method: string, params: unknown): Promise<unknown>; isRunning?(): boolean } | undefined;
    };
  }>;
}

export interface PlainGoal {
  rendered: string;
  goals: string[];
}

export const plainGoalMethod = '$/lean/plainGoal';

function isPlainGoal(x: unknown): x is PlainGoal {
  return (
    typeof x === 'object' &&
    x !== null &&
    Array.isArray((x as PlainGoal).goals) &&
    (x as PlainGoal).goals.every((g) => typeof g === 'string')
  );
}

/**
 * Asks the Lean 4 extension for the goal at `position` of `uri` (0-based LSP position). Resolves with null when
 * the extension has no running client, no goal is there, or it does not answer within `timeoutMs`.
 */
export async function plainGoalAt(
  exports: Lean4Exports,
  uri: string,
  position: { line: number; character: number },
  timeoutMs = 3000,
): Promise<PlainGoal | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  const ask = (async () => {
    const features = await exports.lean4EnabledFeatures;
    const client = features.clientProvider.getActiveClient();
    if (!client) return null;
    const answer = await client.sendRequest(plainGoalMethod, { textDocument: { uri }, position });
    return isPlainGoal(answer) ? answer : null;
  })().catch(() => null);
  try {
    return await Promise.race([ask, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
