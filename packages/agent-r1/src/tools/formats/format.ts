/**
 * How tool calls and the final answer are written in the policy's text, and how tool responses are written
 * back. A format parses an action (never throwing: problems come back in `errors`), renders calls and answers
 * (for demonstrations and tests), renders observations, and writes the system prompt that teaches it.
 */
import type { Tool } from '../tool.js';

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
}

export interface ParsedAction {
  /** The well-formed tool calls, in the order they appear. */
  calls: ToolCall[];
  /** The text of the first `<answer>…</answer>` (trimmed), or null when there is none. */
  answer: string | null;
  /** One readable message per malformed part (bad JSON, missing name, unclosed tag, …). */
  errors: string[];
}

export interface ToolCallFormat {
  readonly name: string;
  /**
   * The closing tags that end an action (e.g. '</tool_call>', '</answer>'): the rollout stops generating an
   * action when its text ends with one of them, and keeps the stop string in the action.
   */
  readonly stop: readonly string[];
  parse(actionText: string): ParsedAction;
  /** The text of one call, such that `parse(renderCall(c)).calls` is `[c]`. */
  renderCall(call: ToolCall): string;
  /** `<answer>…</answer>`. */
  renderAnswer(answer: string): string;
  /** The observation text for a list of tool responses (each already cut to length): each in the response tag. */
  renderObservation(responses: readonly string[]): string;
  /** A one-line reminder of the syntax, sent back when an action had neither a call nor an answer. */
  usageHint(): string;
  /** The instructions that teach the policy the tools and this syntax. */
  systemPrompt(tools: readonly Tool[]): string;
}

export interface ObservationWrapping {
  /** Text put before the responses of one observation (default '\n'); e.g. a chat template's user turn start. */
  observationPrefix?: string;
  /** Text put after them (default '\n'); e.g. the end of the user turn and the start of the assistant's. */
  observationSuffix?: string;
}

export const ANSWER_TAG = 'answer';

export interface TaggedBlock {
  content: string;
  start: number;
}

/** Every `<tag>…</tag>` block of the text (non-nested, in order) and the openings left unclosed. */
export function extractTagged(text: string, tag: string): { blocks: TaggedBlock[]; unclosed: number } {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const blocks: TaggedBlock[] = [];
  let unclosed = 0;
  let from = 0;
  for (;;) {
    const start = text.indexOf(open, from);
    if (start < 0) break;
    const end = text.indexOf(close, start + open.length);
    if (end < 0) {
      unclosed++;
      break;
    }
    blocks.push({ content: text.slice(start + open.length, end), start });
    from = end + close.length;
  }
  return { blocks, unclosed };
}

/** The first answer block of the text, and an error when an answer tag is left open. */
export function parseAnswer(text: string, tag = ANSWER_TAG): { answer: string | null; errors: string[] } {
  const { blocks, unclosed } = extractTagged(text, tag);
  if (blocks.length > 0) return { answer: blocks[0].content.trim(), errors: [] };
  return { answer: null, errors: unclosed > 0 ? [`unclosed <${tag}>: close the answer with </${tag}>`] : [] };
}
