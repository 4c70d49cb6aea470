// Connects a language-server face to a JSON-RPC client over in-memory streams (real LSP framing both ways).
import { PassThrough } from 'node:stream';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { type BackendStatus, type LspProveEvent, type LspRequestTypes, lspMethods } from '../../backend/protocol';
import { startLspFace, type LspFace, type LspFaceOptions } from '../../backend/api/lsp';
import { RunningProofs } from '../../backend/prover/running';
import { readSettings } from '../../backend/settings/settings';
import type { ProveService } from '../../backend/editor/service';
import type { RepairStore } from '../../backend/store/repairs';

export interface FaceClient {
  client: MessageConnection;
  face: LspFace;
  events: LspProveEvent[];
  statuses: BackendStatus[];
  close(): Promise<void>;
}

export async function connectFace(
  createService: () => Promise<ProveService>,
  options: {
    proveTimeoutS?: number;
    refreshMs?: number;
    repairStore?: () => RepairStore;
    proofs?: RunningProofs;
    agents?: LspFaceOptions['agents'];
    /** The workspace folder the client names at initialize. */
    rootUri?: string;
  } = {},
): Promise<FaceClient> {
  const { rootUri = null, ...faceOptions } = options;
  const up = new PassThrough();
  const down = new PassThrough();
  const connection = createConnection(ProposedFeatures.all, new StreamMessageReader(up), new StreamMessageWriter(down));
  const face = startLspFace({
    connection,
    settings: readSettings(),
    createService,
    proofs: new RunningProofs(),
    ...faceOptions,
  });
  connection.listen();
  const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  const events: LspProveEvent[] = [];
  const statuses: BackendStatus[] = [];
  client.onNotification(lspMethods.proveEvent, (e: LspProveEvent) => {
    events.push(e);
  });
  client.onNotification(lspMethods.statusChanged, (s: BackendStatus) => {
    statuses.push(s);
  });
  client.listen();
  await client.sendRequest('initialize', { processId: null, rootUri, capabilities: {} });
  await client.sendNotification('initialized', {});
  return {
    client,
    face,
    events,
    statuses,
    close: async () => {
      client.dispose();
      await face.close();
    },
  };
}

/** Asks kimina/status until the state leaves 'starting' (services start in the background). */
export async function settledStatus(client: MessageConnection): Promise<BackendStatus> {
  let status = (await client.sendRequest(lspMethods.status, {})) as BackendStatus;
  for (let i = 0; i < 100 && status.state === 'starting'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await client.sendRequest(lspMethods.status, {})) as BackendStatus;
  }
  return status;
}

/** A custom request with the types protocol/lsp.ts declares for it. */
export function faceRequest<M extends keyof LspRequestTypes>(
  client: MessageConnection,
  method: M,
  params: LspRequestTypes[M]['params'],
): Promise<LspRequestTypes[M]['result']> {
  return client.sendRequest(method, params) as Promise<LspRequestTypes[M]['result']>;
}
