// Messages between the Training Monitor webview and its view host (extension/trainingMonitor.ts).
// The webview never talks to the backend itself; the host relays.
import type {
  GpuReport,
  RolloutSample,
  StepMetrics,
  TrainingConnectionStatus,
  TrainingLogLine,
  TrainingPresetName,
  TrainingRun,
  TrainingSchedule,
} from '../backend/protocol';

export type ConnectionStatus = TrainingConnectionStatus;

export type ToMonitor =
  | { type: 'connection'; status: ConnectionStatus; message?: string }
  | {
      type: 'presets';
      presets: { name: TrainingPresetName; summary: string }[];
      defaultModel: string;
      workspace: string | null;
    }
  | { type: 'runs'; runs: TrainingRun[] }
  | { type: 'run'; run: TrainingRun }
  | { type: 'metrics'; runId: string; steps: StepMetrics[]; replace: boolean }
  | { type: 'rollouts'; runId: string; rollouts: RolloutSample[]; replace: boolean }
  | { type: 'log'; runId: string; lines: TrainingLogLine[]; replace: boolean }
  | { type: 'gpus'; report: GpuReport }
  | { type: 'error'; message: string };

export type FromMonitor =
  | { type: 'ready' }
  | { type: 'select'; runId: string }
  | { type: 'start'; preset: TrainingPresetName; model: string; schedule: TrainingSchedule; winRateSamples?: number }
  | { type: 'control'; action: 'pause' | 'resume' | 'cancel'; runId: string }
  | { type: 'useModel'; runId: string }
  /** Open the charts of these runs in an editor panel (one run, or several compared). */
  | { type: 'openCharts'; runIds: string[] }
  /** Pick runs to compare with this one. */
  | { type: 'compareRuns'; runId: string };
