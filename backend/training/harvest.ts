// Personal proofs: Lean files of a workspace and the prover's attempt history become training prompts.
// `sorry` declarations are open problems; proven theorems are prompts known to be provable; failed
// first answers with Lean feedback become error-fix samples for the trainer's cache.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ChatMessage, TrainingPrompt } from '../protocol';
import { findDeclarations, formalStatementOf, PROVABLE_KINDS } from '../lean/declarations';
import { buildPrompt, informalFromDocComment } from '../prover/prompt';
import type { AttemptStore } from '../store/attempts';
import { statementKey } from './promptSet';

export interface HarvestedPrompt extends TrainingPrompt { status: 'open' | 'proven' }

/** A fix prompt seed: [system, user, assistant(failed answer), user(feedback)]. */
export interface FixSeed { id: string; prompt: ChatMessage[]; formalStatement: string }

export interface Harvest { prompts: HarvestedPrompt[]; fixSeeds: FixSeed[]; files: number; skipped: string[] }

const SKIP_DIRS = new Set(['.lake', '.git', 'build', 'node_modules', 'lake-packages', '.elan']);

export function leanFiles(root: string, limit = 5000): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try { names = readdirSync(dir).sort(); } catch { return; }
    for (const name of names) {
      if (out.length >= limit) return;
      const p = join(dir, name);
      let st;
      try { st = statSync(p); } catch { continue; }
      if (st.isDirectory()) { if (!SKIP_DIRS.has(name) && !name.startsWith('.')) walk(p); } else if (name.endsWith('.lean')) out.push(p);
    }
  };
  walk(root);
  return out;
}

/** Prompts from one Lean source: every theorem/lemma (with or without `sorry`), as a standalone formal statement. */
export function promptsFromSource(source: string, label: string): HarvestedPrompt[] {
  const out: HarvestedPrompt[] = [];
  for (const decl of findDeclarations(source)) {
    if (!PROVABLE_KINDS.includes(decl.kind) || decl.kind === 'example' || !decl.tactic) continue;
    const formal = formalStatementOf(source, decl);
    const status = decl.sorries.length > 0 ? 'open' : 'proven';
    out.push({
      id: `${label}:${decl.start.line}`,
      prompt: buildPrompt(formal.text, informalFromDocComment(formal.informal)),
      formalStatement: formal.text,
      source: `${label}:${decl.start.line} ${decl.name}`,
      status,
    });
  }
  return out;
}

export function harvestWorkspace(root: string): Harvest {
  const prompts: HarvestedPrompt[] = [];
  const skipped: string[] = [];
  const files = leanFiles(root);
  for (const file of files) {
    try {
      prompts.push(...promptsFromSource(readFileSync(file, 'utf8'), relative(root, file)));
    } catch (err) {
      skipped.push(`${relative(root, file)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { prompts: dedupe(prompts), fixSeeds: [], files: files.length, skipped };
}

/** The prover's history: each proved/attempted theorem is a prompt; failed turn-1 answers with feedback are fix seeds. */
export function harvestAttempts(store: AttemptStore, limit = 500): Harvest {
  const prompts: HarvestedPrompt[] = [];
  const fixSeeds: FixSeed[] = [];
  for (const run of store.recentRuns(limit)) {
    prompts.push({ id: `attempt:${run.id}`, prompt: buildPrompt(run.statement, run.informal), formalStatement: run.statement,
      source: `attempt ${run.id} ${run.theorem}`, status: run.status === 'proved' ? 'proven' : 'open' });
    for (const a of store.attemptsOf(run.id)) {
      // The recipe keeps an empty feedback (a sorry-only failure); its size filters run in the trainer, which has the tokenizer.
      if (a.turn !== 1 || a.verdict === null || a.verdict.status === 'valid' || a.feedback === null || a.feedback === undefined) continue;
      fixSeeds.push({ id: `attempt:${run.id}:${a.sample}`, formalStatement: run.statement,
        prompt: [...a.messages, { role: 'assistant', content: a.response }, { role: 'user', content: a.feedback }] });
    }
  }
  return { prompts: dedupe(prompts), fixSeeds, files: 0, skipped: [] };
}

/** Keeps the first prompt per statement (whitespace-insensitive). */
export function dedupe<T extends TrainingPrompt>(prompts: T[]): T[] {
  const seen = new Set<string>();
  return prompts.filter((p) => {
    const key = statementKey(p.formalStatement);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
