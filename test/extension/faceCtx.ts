// The extension's backend connection (extension/ctx.ts's `CtxApi`) on the REAL backend: the language-server face
// (backend/api/lsp.ts) over in-memory JSON-RPC streams (test/api/faceClient.ts), with whatever services the test
// starts behind it. Requests fail as the real Ctx makes them fail (the JSON-RPC error's message through
// forEditor), notifications are routed as ctx.ts routes them, and setup requests show their `$/progress` in a
// withProgress notification as Ctx.requestWithProgress does. Only the process boundary and the language client
// are left out.
import './useVscodeDouble';
import * as vscode from 'vscode';
import { WorkDoneProgress, type WorkDoneProgressBegin, type WorkDoneProgressReport } from 'vscode-languageserver/node';
import {
  type BackendStatus,
  type LspProveEvent,
  type LspRequestTypes,
  type SorriesProgress,
  lspMethods,
} from '../../backend/protocol';
import type { CtxApi } from '../../extension/ctx';
import { forEditor } from '../../extension/words';
import { settledStatus, type FaceClient } from '../api/faceClient';
import { Memory } from './fakeCtx';

/** What Ctx.request does with a failed request: the message only, in the editor's words. */
const asEditorError = (err: Error): never => {
  throw new Error(forEditor(err?.message ?? String(err)));
};

export class FaceCtx implements CtxApi {
  private readonly statusEmitter = new vscode.EventEmitter<BackendStatus>();
  private readonly eventEmitter = new vscode.EventEmitter<LspProveEvent>();
  private readonly startedEmitter = new vscode.EventEmitter<void>();
  readonly onStatus = this.statusEmitter.event;
  readonly onProveEvent = this.eventEmitter.event;
  readonly onStarted = this.startedEmitter.event;
  private readonly sorriesEmitter = new vscode.EventEmitter<SorriesProgress>();
  readonly onSorriesProgress = this.sorriesEmitter.event;
  readonly memory = new Memory();
  readonly log = vscode.window.createOutputChannel('Kimina', { log: true });
  currentStatus: BackendStatus = { state: 'starting' };
  private progressTokens = 0;

  constructor(private readonly face: FaceClient) {
    // the face's notifications, routed as ctx.ts routes the language client's
    face.client.onNotification(lspMethods.statusChanged, (s: BackendStatus) => this.setStatus(s));
    face.client.onNotification(lspMethods.proveEvent, (e: LspProveEvent) => this.eventEmitter.fire(e));
    face.client.onNotification(lspMethods.sorriesProgress, (p: SorriesProgress) => {
      this.sorriesEmitter.fire(p);
    });
  }

  private setStatus(s: BackendStatus): void {
    this.currentStatus = s;
    this.statusEmitter.fire(s);
  }

  /** As Ctx.startClient ends: the backend's status once its services settled, then "started". */
  async start(): Promise<void> {
    this.setStatus({ state: 'starting', detail: 'starting the backend' });
    this.setStatus(await settledStatus(this.face.client));
    this.startedEmitter.fire();
  }

  readonly request: CtxApi['request'] = (method, params) =>
    (this.face.client.sendRequest(method, params) as Promise<LspRequestTypes[typeof method]['result']>).catch(
      asEditorError,
    );

  readonly requestWithProgress: CtxApi['requestWithProgress'] = (method, params, title) => {
    const workDoneToken = `kimina-progress-${++this.progressTokens}`;
    return Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress) => {
          const listening = this.face.client.onProgress(
            WorkDoneProgress.type,
            workDoneToken,
            (value: WorkDoneProgressBegin | WorkDoneProgressReport | { kind: 'end' }) => {
              if (value.kind !== 'end' && value.message) progress.report({ message: value.message });
            },
          );
          try {
            return (await (
              this.face.client.sendRequest(method, { ...params, workDoneToken }) as Promise<
                LspRequestTypes[typeof method]['result']
              >
            ).catch(asEditorError)) as never;
          } finally {
            listening.dispose();
          }
        },
      ),
    );
  };

  async restart(): Promise<void> {
    await this.start();
  }
}
