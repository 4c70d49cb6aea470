// Renders a conversation with the checkpoint's own Jinja chat template (@huggingface/jinja), the way
// transformers' apply_chat_template(messages, add_generation_prompt=True) does. No other template
// arguments are passed: in particular never enable_thinking=false, which would pre-fill an empty think
// block the Kimina models were not trained on (kimina-format.md §1.3).
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../protocol';
import type { Tokenizer } from './tokenizer';
import { installPythonStringMethods } from './pythonStrings';

// strip/lstrip/rstrip and |trim with Python's semantics (the library ignores their argument).
installPythonStringMethods();

export interface ChatTemplate {
  /** The prompt text: every message, then the assistant generation prompt unless turned off. */
  render(messages: readonly ChatMessage[], options?: { addGenerationPrompt?: boolean }): string;
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
): ChatTemplate {
  let template: Template;
  try {
    template = new Template(source);
  } catch (err) {
    throw new Error(`${origin}: cannot parse the Jinja template: ${(err as Error).message}`);
  }
  return {
    render(messages, options = {}) {
      checkMessages(messages);
      try {
        return template.render({
          ...tokens,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          add_generation_prompt: options.addGenerationPrompt !== false,
        });
      } catch (err) {
        throw new Error(`${origin}: rendering failed: ${(err as Error).message}`);
      }
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
