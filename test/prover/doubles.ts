// Test doubles for the prove loop: a scripted engine (answers chosen by a function of the conversation)
// and a stand-in verifier (verdicts chosen by a function of the code). Neither runs a model or Lean.
import type { ChatMessage, CommandResponse, Verdict } from '../../backend/protocol';
import type { Engine, Generation, OnDelta, SamplingOptions } from '../../backend/model/engine';
import type { CheckOptions, CheckOutcome, LeanVerifier } from '../../backend/lean/types';

/** Test double: streams a scripted answer per conversation in small chunks, honouring the abort signal. */
export class ScriptedEngine implements Engine {
  readonly name = 'scripted-test-double';
  readonly model = 'scripted';
  calls: { conversations: ChatMessage[][]; options: SamplingOptions }[] = [];
  constructor(
    private readonly answer: (conversation: ChatMessage[], index: number) => string,
    readonly maxContext?: number,
    private readonly chunk = 7,
    private readonly delayMs = 0,
  ) {}

  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    this.calls.push({ conversations, options });
    const texts = conversations.map((c, i) => this.answer(c, i));
    const sent = texts.map(() => 0);
    let cancelled = false;
    while (texts.some((t, i) => sent[i] < t.length)) {
      if (options.signal?.aborted) {
        cancelled = true;
        break;
      }
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      texts.forEach((t, i) => {
        if (sent[i] >= t.length) return;
        const piece = t.slice(sent[i], sent[i] + this.chunk);
        sent[i] += piece.length;
        onDelta?.(i, piece);
      });
    }
    return texts.map((t, i) => ({
      text: t.slice(0, sent[i]),
      tokens: Math.ceil(sent[i] / this.chunk),
      finishReason: cancelled && sent[i] < t.length ? 'cancelled' : 'stop',
    }));
  }

  async countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    return Math.ceil(conversation.reduce((n, m) => n + m.content.length, 0) / 4);
  }

  async close(): Promise<void> {}
}

export type Judgement = { verdict: Verdict; response?: CommandResponse; delayMs?: number };

/** Test double: a LeanVerifier whose verdicts come from a function of the code; records every call. */
export class StandInVerifier implements LeanVerifier {
  calls: { code: string; options?: CheckOptions }[] = [];
  aborted = 0;
  constructor(private readonly judge: (code: string) => Judgement) {}

  async check(code: string, options?: CheckOptions): Promise<CheckOutcome> {
    this.calls.push({ code, options });
    const j = this.judge(code);
    if (j.delayMs) {
      await new Promise<void>((resolve) => {
        const onAbort = () => {
          clearTimeout(t);
          this.aborted++;
          resolve();
        };
        const t = setTimeout(() => {
          options?.signal?.removeEventListener('abort', onAbort);
          resolve();
        }, j.delayMs);
        options?.signal?.addEventListener('abort', onAbort, { once: true });
      });
      if (options?.signal?.aborted) throw new Error('check cancelled');
    }
    return { verdict: j.verdict, response: j.response };
  }

  async close(): Promise<void> {}
}

export const valid = (): Verdict => ({
  status: 'valid',
  reason: 'Lean accepted the proof.',
  messages: [],
  sorries: [],
  time: 0.01,
});
export const leanError = (messages: Verdict['messages']): Verdict => ({
  status: 'lean_error',
  reason: 'Lean reported errors.',
  messages,
  sorries: [],
  time: 0.01,
});
