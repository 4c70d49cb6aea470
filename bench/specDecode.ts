// Speculative decoding by prompt lookup, measured on Kimina-shaped answers by teacher forcing: the
// answer's own tokens decide which drafts a model that writes exactly this answer would accept.
// Answer set (no real Kimina-Prover samples are available offline; these are the public format
// examples): kimina-format.md §8.1's well-formed answer (backend/demo/kiminaExamples.ts WELL_FORMED),
// the scripted test model's first-turn answer (BOGUS_ANSWER) and its fix-turn answer after §8.3's error
// message (CORRECT_ANSWER), all from backend/demo/models/scriptedModel.ts.
import type { Decoder, SpeculationOptions } from '../backend/model/onnx/decoder';
import { PromptLookup } from '../backend/model/onnx/promptLookup';
import { argmax } from '../backend/model/onnx/sampler';
import { loadTokenizer } from '../backend/model/tokenizer';
import { chatTemplateOf } from '../backend/model/chatTemplate';
import { buildPrompt } from '../backend/prover/prompt';
import type { ChatMessage } from '../backend/protocol';
import { STATEMENT, WELL_FORMED, FIX_MESSAGE } from '../backend/demo/kiminaExamples';
import { BOGUS_ANSWER, CORRECT_ANSWER } from '../backend/demo/models/scriptedModel';
import { qwen3TokenizerDir } from '../backend/demo/models/tinyTokenizer';
import { stateWithCached } from './oursDecode';

export interface AnswerCase {
  name: string;
  prompt: number[];
  answer: number[];
}

/** The answer set tokenized with the real Qwen3 tokenizer and chat template. */
export async function kiminaAnswers(): Promise<AnswerCase[]> {
  const tok = await loadTokenizer(qwen3TokenizerDir());
  const template = chatTemplateOf(tok, 'Qwen3');
  const first = buildPrompt(STATEMENT);
  const ids = async (c: ChatMessage[]) => tok.encode(await template.render(c));
  const fix: ChatMessage[] = [
    ...first,
    { role: 'assistant', content: BOGUS_ANSWER },
    { role: 'user', content: FIX_MESSAGE },
  ];
  return [
    { name: 'well-formed first answer (§8.1)', prompt: await ids(first), answer: tok.encode(WELL_FORMED) },
    { name: 'first answer, wrong proof', prompt: await ids(first), answer: tok.encode(BOGUS_ANSWER) },
    { name: 'fix-turn answer', prompt: await ids(fix), answer: tok.encode(CORRECT_ANSWER) },
  ];
}

export interface Acceptance {
  tokens: number;
  steps: number;
  drafted: number;
  accepted: number;
}

/** Forward passes, drafted and accepted tokens when decoding `answer` after `prompt` (teacher forcing). */
export function teacherForced(prompt: number[], answer: number[], spec: SpeculationOptions): Acceptance {
  const lookup = new PromptLookup(spec);
  const context = [...prompt, answer[0]];
  const r: Acceptance = { tokens: answer.length, steps: 1, drafted: 0, accepted: 0 }; // the first token comes from the prefill
  for (let i = 1; i < answer.length;) {
    const drafts = lookup.draft(context, Math.min(spec.maxDraft, answer.length - i - 1));
    let a = 0;
    while (a < drafts.length && drafts[a] === answer[i + a]) a++;
    r.drafted += drafts.length;
    r.accepted += a;
    context.push(...answer.slice(i, i + a + 1));
    i += a + 1;
    r.steps++;
  }
  return r;
}

/**
 * Decodes `answer` through the real graph the way the decoder does (feed the pending token plus
 * drafts, greedy check of every position, roll rejected slots back), with the answer deciding
 * acceptance. Returns decode tokens/s after the prefill.
 */
export async function replay(
  decoder: Decoder,
  prompt: number[],
  answer: number[],
  spec?: SpeculationOptions,
): Promise<{ tokensPerSecond: number; steps: number }> {
  const state = decoder.newState(1);
  await decoder.prefill(state, [prompt]);
  const V = decoder.shape.vocabSize;
  const lookup = spec ? new PromptLookup(spec) : undefined;
  const context = [...prompt, answer[0]];
  let pending = answer[0];
  let steps = 0;
  const t0 = performance.now();
  for (let i = 1; i < answer.length;) {
    const drafts = lookup ? lookup.draft(context, Math.min(spec!.maxDraft, answer.length - i - 1)) : [];
    const S = 1 + drafts.length;
    const start = state.cache.length;
    const logits = await decoder.feed(state, [[pending, ...drafts]], S);
    let a = 0;
    for (let j = 0; j < S; j++) {
      argmax(logits.subarray(j * V, (j + 1) * V)); // the sampling work a real step does
      if (j < drafts.length && a === j && drafts[j] === answer[i + j]) a++;
    }
    state.cache.maskSlots(0, start + 1 + a, start + S);
    state.cache.length = start + 1 + a;
    state.nextPosition[0] -= S - 1 - a;
    const produced = answer.slice(i, i + a + 1);
    context.push(...produced);
    pending = produced[produced.length - 1];
    i += produced.length;
    steps++;
  }
  return { tokensPerSecond: (answer.length - 1) / ((performance.now() - t0) / 1000), steps };
}

/** Milliseconds of one forward pass over 1 + k new tokens at `cached` cached tokens (best of `repeats`). */
export async function verifyCost(decoder: Decoder, cached: number, k: number, repeats = 5): Promise<number> {
  const state = stateWithCached(decoder, 1, cached, k + 2);
  let best = Infinity;
  for (let r = 0; r <= repeats; r++) {
    const tokens = Array.from({ length: k + 1 }, (_, i) => 1000 + i);
    const t = performance.now();
    await decoder.feed(state, [tokens], k + 1);
    if (r > 0) best = Math.min(best, performance.now() - t);
    state.cache.length = cached;
    state.cache.maskSlots(0, cached, cached + k + 1);
    state.nextPosition = [cached];
  }
  return best;
}
