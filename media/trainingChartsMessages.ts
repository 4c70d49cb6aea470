// Messages between a Training charts editor panel and its host (extension/trainingCharts.ts): the runs it shows,
// their metrics (the Training Monitor's own messages), and the link to the server.
import type { ToMonitor } from './trainingMonitorMessages';

export type ToCharts =
  | { type: 'show'; runIds: string[] }
  | Extract<ToMonitor, { type: 'runs' | 'run' | 'metrics' | 'connection' | 'error' }>;

export type FromCharts = { type: 'ready' };
