// The onnx engine's prompt-lookup drafting (onnx/promptLookup.ts: the answer's next tokens guessed from where its
// last n tokens occurred earlier, the think block and the prompt included) as a node-llama-cpp token predictor.
// llama.cpp checks every predicted token against the one it samples, so the output is the same with or without it.
import { PromptLookup } from '../onnx/promptLookup';
import type { NodeLlamaCpp, TokenPredictorBase } from './binding';

/** A fresh predictor for one sequence (node-llama-cpp's rule: never shared), drafting up to `maxDraft` tokens. */
export function promptLookupPredictor(mod: NodeLlamaCpp, maxDraft: number): TokenPredictorBase {
  class PromptLookupPredictor extends mod.TokenPredictor {
    private tokens: number[] = [];
    private lookup = new PromptLookup();
    override reset({ stateTokens }: { stateTokens: number[] }): void {
      this.tokens = [...stateTokens];
      this.lookup = new PromptLookup();
    }
    override pushTokens(tokens: number[]): void {
      this.tokens.push(...tokens);
    }
    override predictTokens(): number[] {
      return this.lookup.draft(this.tokens, maxDraft);
    }
  }
  return new PromptLookupPredictor();
}
