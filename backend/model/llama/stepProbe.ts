// The llama engine's calibration probe (schedule.ts's TimeStep): one decode step of `rows` sequences of one
// llama.cpp context, each holding `cachedPerRow` tokens, decoded the way generate() decodes (the same context
// settings, the rows batched into one step, each row's next token sampled from its logits). The cache is filled
// once per point (rows, cached) and each timed token is erased again, so repeats time the same length.
import type { TimeStep } from '../schedule';
import type { LlamaContext, LlamaModel } from './binding';

export interface StepProbe {
  timeStep: TimeStep;
  /** Frees the context the last point filled. */
  close(): Promise<void>;
}

export interface StepProbeSettings {
  threads?: number;
  flashAttention: boolean | 'auto';
  /** Tokens below this are fed (varied ids, so no row is a copy of another). */
  vocabSize: number;
}

interface Filled {
  rows: number;
  cached: number;
  context: LlamaContext;
  sequences: ReturnType<LlamaContext['getSequence']>[];
}

export function llamaStepProbe(model: LlamaModel, settings: StepProbeSettings): StepProbe {
  const token = (i: number) => (i * 7919 + 13) % settings.vocabSize;
  let held: Filled | undefined;

  const release = async () => {
    const h = held;
    held = undefined;
    await h?.context.dispose();
  };

  /** One step of every row together; then the rows' new tokens are erased (back to `cached` each). */
  const step = async (h: Filled): Promise<number> => {
    const t = performance.now();
    await Promise.all(
      h.sequences.map((s, r) => s.controlledEvaluate([[token(h.cached + r), { generateNext: { token: true } }]])),
    );
    const ms = performance.now() - t;
    await Promise.all(h.sequences.map((s) => s.eraseContextTokenRanges([{ start: h.cached, end: s.nextTokenIndex }])));
    return ms;
  };

  const filled = async (rows: number, cached: number): Promise<Filled> => {
    if (held && held.rows === rows && held.cached === cached) return held;
    await release();
    const context = await model.createContext({
      contextSize: cached + 8,
      sequences: rows,
      threads: settings.threads,
      flashAttention: settings.flashAttention,
    });
    const sequences = Array.from({ length: rows }, () => context.getSequence());
    await Promise.all(
      sequences.map((s, r) =>
        s.evaluateWithoutGeneratingNewTokens(Array.from({ length: cached }, (_, i) => token(i + r))),
      ),
    );
    held = { rows, cached, context, sequences };
    await step(held); // warm-up
    return held;
  };

  return {
    timeStep: async (rows, cachedPerRow) => step(await filled(rows, cachedPerRow)),
    close: release,
  };
}
