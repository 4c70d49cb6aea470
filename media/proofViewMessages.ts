// Messages between the Proof view webview and its host in the extension (types only).
import type { AgentJob, EditorProveResult, LspProveEvent } from '../backend/protocol';

export type BudgetPreset = 'quick' | 'thorough' | 'custom';

/** The budget a proof runs under (extension/budget.ts), with the engine's last measured speed (all samples). */
export interface ViewBudget {
  preset: BudgetPreset;
  maxTokens: number;
  samples: number;
  fixTurns: number;
  /** The budget in words, with an estimate when a speed was measured. */
  text: string;
  tokensPerSecond?: number;
}

export type ToView =
  | {
      type: 'start';
      id: string;
      title: string;
      mode: 'theorem' | 'goal' | 'repair';
      file: string;
      startedAt: number;
      budget?: ViewBudget;
    }
  /** The budget the next proof will use changed (the user picked a preset). */
  | { type: 'budget'; budget: ViewBudget }
  | { type: 'event'; event: LspProveEvent; at: number }
  | { type: 'result'; result: EditorProveResult; canAccept: boolean; at: number }
  | { type: 'failed'; message: string }
  | { type: 'resolved'; outcome: 'accepted' | 'rejected' | 'stale' }
  /** The goal at the cursor from the Lean 4 extension (`$/lean/plainGoal`); `line` 0-based. */
  | { type: 'goal'; goals: string[]; line: number; source: 'lean4' }
  /** Replaces a failure that no longer holds (e.g. the model has been pulled since). */
  | { type: 'note'; message: string }
  /** Agents' proof jobs (MCP and language-model tools), newest first: listed under the run. */
  | { type: 'agentJobs'; jobs: AgentJob[] };

export type FromView =
  | { type: 'ready' | 'accept' | 'reject' | 'retry' | 'cancel' | 'showDiff' | 'setupLean' | 'pickTheorem' }
  | { type: 'budget'; preset: BudgetPreset };
