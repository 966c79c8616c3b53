/**
 * How a pretrained chat model talks with tools, read from its own chat template rather than written here:
 * the prompt is the template's rendering of a system instruction and the user's message with the tools
 * declared as the template declares them; calls are Hermes `<tool_call>{json}</tool_call>` blocks (Qwen2.5's
 * and Qwen3's format); a tool's response goes back wrapped as the template wraps a `tool` message (Qwen:
 * the assistant's turn ends, a user turn holds `<tool_response>` blocks, a new assistant turn opens); the
 * token that ends an assistant turn (`<|im_end|>`) stops an action.
 *
 * The wrapping is found by rendering a probe conversation (user, assistant, tool) and cutting it around
 * the assistant's and the tool's texts, so a template that renders tool messages another way is refused
 * with one error, never half-followed.
 */
import type { ChatMessage, HfTokenizer } from '@agent-r1/nn';
import type { Tool } from '../tool.js';
import { HermesFormat } from './hermes.js';

export interface ChatToolsOptions {
  /** Further variables the template reads, e.g. `{ enable_thinking: false }` for Qwen3. */
  variables?: Record<string, unknown>;
}

export interface ChatTools {
  /** Hermes calls and answers; observations wrapped as the template wraps tool messages. */
  format: HermesFormat;
  /** The prompt of one episode: the template's system turn (instruction and tools), the user's turn, and the opening of the assistant's. */
  prompt(instruction: string, user: string, tools: readonly Tool[]): string;
  /** The tokens that end an action: the end of an assistant turn, and the tokenizer's end of text. */
  stopTokens: number[];
}

const ACTION_PROBE = 'ACTION-PROBE-7f3a';
const RESPONSE_PROBE = 'RESPONSE-PROBE-9c1e';
const RESPONSE_OPEN = '<tool_response>\n';
const RESPONSE_CLOSE = '\n</tool_response>';

/** The template's tool-calling conventions (see the module comment); `source` names the model in errors. */
export function chatTools(tokenizer: HfTokenizer, source: string, options: ChatToolsOptions = {}): ChatTools {
  const variables = options.variables ?? {};
  const refuse = (why: string) =>
    new Error(
      `${source}: its chat template ${why}; agents train on templates that render tool responses as <tool_response> blocks after the assistant's turn (Qwen2.5, Qwen3)`,
    );
  if (tokenizer.chatTemplate === null)
    throw refuse('is missing (tokenizer_config.json has no chat_template)');
  const probe: ChatMessage[] = [
    { role: 'user', content: 'question' },
    { role: 'assistant', content: ACTION_PROBE },
    { role: 'tool', content: RESPONSE_PROBE },
  ];
  const rendered = tokenizer.applyChatTemplate(probe, { addGenerationPrompt: true, variables });
  const actionEnd = rendered.indexOf(ACTION_PROBE) + ACTION_PROBE.length;
  const responseStart = rendered.indexOf(RESPONSE_PROBE);
  if (actionEnd < ACTION_PROBE.length || responseStart < actionEnd)
    throw refuse('does not render an assistant message and a tool message after it');
  const between = rendered.slice(actionEnd, responseStart);
  const after = rendered.slice(responseStart + RESPONSE_PROBE.length);
  if (!between.endsWith(RESPONSE_OPEN) || !after.startsWith(RESPONSE_CLOSE))
    throw refuse(`renders a tool message as ${JSON.stringify(between + RESPONSE_PROBE + after)}`);
  const format = new HermesFormat({
    callJson: 'spaced',
    observationPrefix: between.slice(0, -RESPONSE_OPEN.length),
    observationSuffix: after.slice(RESPONSE_CLOSE.length),
  });
  // The first special token after the assistant's text ends its turn.
  const endOfTurn = tokenizer.encode(between).find((id) => tokenizer.isSpecial(id));
  const eos = tokenizer.eosToken === null ? undefined : tokenizer.tokenId(tokenizer.eosToken);
  const stopTokens = [...new Set([endOfTurn, eos].filter((id): id is number => id !== undefined))];
  if (stopTokens.length === 0) throw refuse('ends an assistant turn with no special token');
  return {
    format,
    stopTokens,
    prompt(instruction, user, tools) {
      const declared = tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      return tokenizer.applyChatTemplate(
        [
          { role: 'system', content: instruction },
          { role: 'user', content: user },
        ],
        { tools: declared, addGenerationPrompt: true, variables },
      );
    },
  };
}
