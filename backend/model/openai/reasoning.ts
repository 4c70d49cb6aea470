// Folds a server's separate reasoning field back into the text the model wrote: `<think>` + reasoning +
// `</think>` + content (kimina-format.md §9, ux-conventions.md §2.4). Newlines the server trimmed are
// restored to Qwen's layout (`<think>\n…\n</think>\n…`) so line-based format checks see whole lines.
export interface ReasoningDelta {
  reasoning?: string;
  content?: string;
}

/**
 * The reasoning field names servers use in a chat message or delta, as their sources say:
 * - `reasoning`: vLLM (vllm-project/vllm d7e5252, vllm/entrypoints/openai/engine/protocol.py DeltaMessage, which
 *   copies it into the deprecated `reasoning_content` too, so one is read, not both) and Ollama's /v1
 *   (ollama/ollama fb30760, openai/openai.go Message/Delta `json:"reasoning"`, filled from its `thinking`);
 * - `reasoning_content`: llama.cpp's server (`--reasoning-format deepseek`), SGLang
 *   (python/sglang/srt/entrypoints/openai/protocol.py DeltaMessage) and vLLM before the rename.
 */
const REASONING_FIELDS = ['reasoning', 'reasoning_content'] as const;

/** Pulls the reasoning text out of a chat message or delta, whichever field name the server uses. */
export function reasoningOf(delta: Record<string, unknown> | undefined): string | undefined {
  if (!delta) return undefined;
  for (const key of REASONING_FIELDS) {
    const v = delta[key];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

export class ThinkFolder {
  private state: 'start' | 'thinking' | 'answer' = 'start';
  private lastChar = '';

  /** Text to append for this delta (think tags included). */
  push(delta: ReasoningDelta): string {
    let out = '';
    if (delta.reasoning) {
      if (this.state === 'start') {
        out += '<think>' + (delta.reasoning.startsWith('\n') ? '' : '\n');
        this.state = 'thinking';
      }
      // Reasoning after the answer began is unusual; keep it as plain text rather than lose it.
      out += delta.reasoning;
    }
    if (delta.content) {
      if (this.state === 'thinking') {
        const tail = out.length > 0 ? out[out.length - 1] : this.lastChar;
        out += (tail === '\n' ? '' : '\n') + '</think>' + (delta.content.startsWith('\n') ? '' : '\n');
      }
      this.state = 'answer';
      out += delta.content;
    }
    if (out.length > 0) this.lastChar = out[out.length - 1];
    return out;
  }
}
