// Custom LSP requests and notifications between the extension and the backend's language-server face.
// Each is declared once here: its method name and its parameter and result types.
import type { ProveEvent, ProveRequest, ProveResult } from './prove';

export interface ProveParams extends ProveRequest {
  /** The document the theorem comes from, for code lenses and gutter marks. */
  uri?: string;
  /** An id chosen by the client so that it can cancel and match events. */
  id: string;
}

export interface CancelParams { id: string }
export interface BackendStatus {
  state: 'starting' | 'ready' | 'proving' | 'training' | 'error';
  detail?: string;
  engine?: string;
  model?: string;
  lean?: string;
}

export const lspMethods = {
  /** Request: prove a theorem; answers with the final result, streams `proveEvent` meanwhile. */
  prove: 'kimina/prove',
  /** Request: cancel a proof by id. */
  cancel: 'kimina/cancel',
  /** Request: the backend's state for the status bar. */
  status: 'kimina/status',
  /** Notification (server → client): one event of a running proof. */
  proveEvent: 'kimina/proveEvent',
  /** Notification (server → client): the backend's state changed. */
  statusChanged: 'kimina/statusChanged',
} as const;

export interface LspRequestTypes {
  'kimina/prove': { params: ProveParams; result: ProveResult };
  'kimina/cancel': { params: CancelParams; result: { cancelled: boolean } };
  'kimina/status': { params: Record<string, never>; result: BackendStatus };
}
export interface LspNotificationTypes {
  'kimina/proveEvent': ProveEvent;
  'kimina/statusChanged': BackendStatus;
}
