// Renders a conversation with the checkpoint's own Jinja chat template (@huggingface/jinja), the way
// transformers' apply_chat_template(messages, add_generation_prompt=True) does. No other template
// arguments are passed: in particular never enable_thinking=false, which would pre-fill an empty think
// block the Kimina models were not trained on (kimina-format.md §1.3).
// A template is a checkpoint's code: it renders in a child process (templateProcess.ts, templateWorker.ts;
// dist/template-worker.js next to a bundle) with a time limit, a heap limit and a limit on the prompt's length,
// so one that loops (`range(100000000)`, nested loops) fails with an error naming it and the server goes on.
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../protocol';
import type { Tokenizer } from './tokenizer';
import { installPythonStringMethods } from './pythonStrings';
import { type RenderJob, type RenderLimits, DEFAULT_RENDER_LIMITS, renderOffThread } from './templateProcess';

export type { RenderJob, RenderLimits };

// strip/lstrip/rstrip and |trim with Python's semantics (the library ignores their argument).
installPythonStringMethods();

export interface ChatTemplate {
  /** The prompt text: every message, then the assistant generation prompt unless turned off. Rendered off-thread, bounded. */
  render(messages: readonly ChatMessage[], options?: { addGenerationPrompt?: boolean }): Promise<string>;
}

const compiled = new Map<string, Template>();

/** The render itself (the worker runs exactly this; templates compiled once per worker). */
export function renderInPlace(job: RenderJob): string {
  let template = compiled.get(job.source);
  if (!template) {
    template = new Template(job.source);
    if (compiled.size > 8) compiled.clear();
    compiled.set(job.source, template);
  }
  return template.render({ ...job.tokens, messages: job.messages, add_generation_prompt: job.addGenerationPrompt });
}

const ROLES = new Set(['system', 'user', 'assistant']);

function checkMessages(messages: readonly ChatMessage[]): void {
  if (messages.length === 0) throw new Error('cannot render an empty conversation');
  messages.forEach((m, i) => {
    if (!m || !ROLES.has(m.role))
      throw new Error(`message ${i}: role must be system, user or assistant, got ${JSON.stringify(m?.role)}`);
    if (typeof m.content !== 'string') throw new Error(`message ${i} (${m.role}): content must be a string`);
  });
}

/**
 * Compiles a Jinja chat template. `tokens` are the special-token strings templates may reference
 * (bos_token, eos_token, …); `origin` names where the template came from, for error messages.
 */
export function compileChatTemplate(
  source: string,
  tokens: Record<string, string> = {},
  origin = 'chat template',
  limits: RenderLimits = DEFAULT_RENDER_LIMITS,
): ChatTemplate {
  try {
    new Template(source); // parse errors show at once, where the template is loaded
  } catch (err) {
    throw new Error(`${origin}: cannot parse the Jinja template: ${(err as Error).message}`);
  }
  return {
    async render(messages, options = {}) {
      checkMessages(messages);
      return renderOffThread(
        {
          source,
          tokens,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          addGenerationPrompt: options.addGenerationPrompt !== false,
          maxChars: limits.maxChars,
        },
        limits,
        origin,
      );
    },
  };
}

/** The chat template shipped with a tokenizer (chat_template.jinja, else tokenizer_config.json's, as transformers). */
export function chatTemplateOf(tokenizer: Tokenizer, modelName = 'the model'): ChatTemplate {
  if (!tokenizer.chatTemplate) {
    throw new Error(
      `${modelName} has no chat template (no chat_template in tokenizer_config.json and no chat_template.jinja); Kimina prompts must be rendered with the checkpoint's own template`,
    );
  }
  return compileChatTemplate(tokenizer.chatTemplate, tokenizer.templateTokens, `chat template of ${modelName}`);
}
