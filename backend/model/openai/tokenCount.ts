// Counting a conversation's prompt tokens for an OpenAI-compatible server, most exact source first:
// the server's own tokenizer (vLLM's or SGLang's `POST /tokenize` with messages; llama.cpp `/apply-template` then
// `/tokenize`), else a local copy of the model's tokenizer and chat template, else an estimate.
import type { AxiosInstance } from 'axios';
import type { ChatMessage } from '../../protocol';
import { loadTokenizer, type Tokenizer } from '../tokenizer';
import { chatTemplateOf, type ChatTemplate } from '../chatTemplate';

export type TokenCountSource = 'server' | 'server-template' | 'local' | 'estimate';

/** Characters per token assumed by the estimate; low on purpose, so limits err on the safe side. */
const ESTIMATE_CHARS_PER_TOKEN = 3;

/** A model folder's tokenizer and chat template: the prompt as the checkpoint renders it. */
export interface LocalTemplate {
  tokenizer: Tokenizer;
  template: ChatTemplate;
}

export async function loadLocalTemplate(dir: string): Promise<LocalTemplate> {
  const tokenizer = await loadTokenizer(dir);
  return { tokenizer, template: chatTemplateOf(tokenizer, dir) };
}

export interface TokenCounterOptions {
  http: AxiosInstance;
  /** The server root (the base URL without its trailing /v1). */
  rootUrl: string;
  model: string;
  /** A model folder with tokenizer.json and a chat template, used when the server cannot count. */
  tokenizerDir?: string;
  /** Loads tokenizerDir's tokenizer and template once (shared with the engine's template check). */
  local?: () => Promise<LocalTemplate>;
  log: (line: string) => void;
}

type Counter = (conversation: ChatMessage[]) => Promise<number | undefined>;

export class PromptTokenCounter {
  /** Where the last count came from. */
  source: TokenCountSource | undefined;
  private chosen: { source: TokenCountSource; count: Counter } | undefined;
  private local: Promise<Counter> | undefined;

  constructor(private readonly o: TokenCounterOptions) {}

  async count(conversation: ChatMessage[]): Promise<number> {
    if (this.chosen) {
      const n = await this.chosen.count(conversation);
      if (n !== undefined) return n;
    }
    const candidates: Array<{ source: TokenCountSource; count: Counter }> = [
      { source: 'server', count: (c) => this.tokenizeMessages(c) },
      { source: 'server-template', count: (c) => this.llamaCppTokenize(c) },
    ];
    if (this.o.tokenizerDir) candidates.push({ source: 'local', count: (c) => this.localCount(c) });
    for (const candidate of candidates) {
      const n = await candidate.count(conversation).catch(() => undefined);
      if (n !== undefined) {
        this.chosen = candidate;
        this.source = candidate.source;
        return n;
      }
    }
    if (this.source !== 'estimate') {
      this.o.log(
        `prompt token counts are estimates (characters / ${ESTIMATE_CHARS_PER_TOKEN}): the server has no tokenize endpoint` +
          (this.o.tokenizerDir
            ? ` and the tokenizer in ${this.o.tokenizerDir} could not be used`
            : ' and no local model folder is known (set KIMINA_MODEL to a model folder or pull the model)'),
      );
    }
    this.source = 'estimate';
    this.chosen = { source: 'estimate', count: async (c) => estimate(c) };
    return estimate(conversation);
  }

  private async tokenizeMessages(conversation: ChatMessage[]): Promise<number | undefined> {
    const r = await this.o.http.post(
      `${this.o.rootUrl}/tokenize`,
      { model: this.o.model, messages: conversation, add_generation_prompt: true },
      { validateStatus: () => true },
    );
    if (r.status !== 200 || !r.data || typeof r.data !== 'object') return undefined;
    // vLLM and SGLang (0.5.23) answer {count, max_model_len, tokens}; llama.cpp's /tokenize ignores messages and
    // has no count; an SGLang that takes only `prompt` refuses messages (HTTP 400).
    return typeof r.data.count === 'number' && r.data.count > 0 ? r.data.count : undefined;
  }

  private async llamaCppTokenize(conversation: ChatMessage[]): Promise<number | undefined> {
    const t = await this.o.http.post(
      `${this.o.rootUrl}/apply-template`,
      { messages: conversation },
      { validateStatus: () => true },
    );
    if (t.status !== 200 || typeof t.data?.prompt !== 'string') return undefined;
    const r = await this.o.http.post(
      `${this.o.rootUrl}/tokenize`,
      { content: t.data.prompt, add_special: false, parse_special: true },
      { validateStatus: () => true },
    );
    if (r.status !== 200 || !Array.isArray(r.data?.tokens)) return undefined;
    return r.data.tokens.length;
  }

  private async localCount(conversation: ChatMessage[]): Promise<number | undefined> {
    this.local ??= (async () => {
      const { tokenizer, template } = await (this.o.local?.() ?? loadLocalTemplate(this.o.tokenizerDir!));
      return async (c: ChatMessage[]) => tokenizer.encode(await template.render(c)).length;
    })();
    return (await this.local)(conversation);
  }
}

function estimate(conversation: ChatMessage[]): number {
  // Chat markup: about 5 tokens per message plus the generation prompt.
  const chars = conversation.reduce((sum, m) => sum + m.content.length, 0);
  return Math.ceil(chars / ESTIMATE_CHARS_PER_TOKEN) + 5 * conversation.length + 3;
}
