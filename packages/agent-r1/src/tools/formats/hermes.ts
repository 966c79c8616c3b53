/**
 * The Hermes / Qwen tool-call format: `<tool_call>{"name": "search", "arguments": {"query": "…"}}</tool_call>`,
 * one or more per action; tool responses come back as `<tool_response>…</tool_response>`.
 */
import type { Tool } from '../tool.js';
import {
  ANSWER_TAG,
  extractTagged,
  type ObservationWrapping,
  type ParsedAction,
  parseAnswer,
  type ToolCall,
  type ToolCallFormat,
} from './format.js';

const CALL = 'tool_call';
const RESPONSE = 'tool_response';

export interface HermesOptions extends ObservationWrapping {
  /**
   * How a rendered call's JSON is spaced: 'compact' (JSON.stringify, the default) or 'spaced', with
   * Python json.dumps's `, ` and `: ` separators, as Qwen's chat templates write tool calls.
   */
  callJson?: 'compact' | 'spaced';
}

/** JSON with json.dumps's default separators. */
function spacedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(spacedJson).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}: ${spacedJson(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseCall(body: string, index: number): ToolCall | string {
  const label = `tool call ${index + 1}`;
  let value: unknown;
  try {
    value = JSON.parse(body.trim());
  } catch (e) {
    return `${label}: invalid JSON (${e instanceof Error ? e.message : String(e)})`;
  }
  if (!isObject(value)) return `${label}: expected a JSON object {"name": …, "arguments": {…}}`;
  const { name } = value;
  if (typeof name !== 'string' || name.length === 0) return `${label}: missing "name"`;
  let args = value.arguments ?? {};
  if (typeof args === 'string') {
    // OpenAI style: the arguments as a JSON-encoded string.
    try {
      args = JSON.parse(args);
    } catch {
      return `${label} (${JSON.stringify(name)}): "arguments" is a string that is not JSON`;
    }
  }
  if (!isObject(args)) return `${label} (${JSON.stringify(name)}): "arguments" must be a JSON object`;
  return { name, args };
}

export class HermesFormat implements ToolCallFormat {
  readonly name = 'hermes';
  readonly stop: readonly string[] = [`</${CALL}>`, `</${ANSWER_TAG}>`];
  readonly #prefix: string;
  readonly #suffix: string;
  readonly #json: (v: unknown) => string;

  constructor(options: HermesOptions = {}) {
    this.#prefix = options.observationPrefix ?? '\n';
    this.#suffix = options.observationSuffix ?? '\n';
    this.#json = options.callJson === 'spaced' ? spacedJson : JSON.stringify;
  }

  parse(actionText: string): ParsedAction {
    const text = String(actionText);
    const { answer, errors } = parseAnswer(text);
    const calls: ToolCall[] = [];
    const { blocks, unclosed } = extractTagged(text, CALL);
    blocks.forEach((b, i) => {
      const c = parseCall(b.content, i);
      if (typeof c === 'string') errors.push(c);
      else calls.push(c);
    });
    if (unclosed > 0) errors.push(`unclosed <${CALL}>: close each call with </${CALL}>`);
    return { calls, answer, errors };
  }

  renderCall(call: ToolCall): string {
    // '<' is written as its JSON escape, so no argument can open or close a tag.
    const json = this.#json({ name: call.name, arguments: call.args }).replace(/</g, '\\u003c');
    return `<${CALL}>\n${json}\n</${CALL}>`;
  }

  renderAnswer(answer: string): string {
    return `<${ANSWER_TAG}>${answer}</${ANSWER_TAG}>`;
  }

  renderObservation(responses: readonly string[]): string {
    return (
      this.#prefix + responses.map((r) => `<${RESPONSE}>\n${r}\n</${RESPONSE}>`).join('\n') + this.#suffix
    );
  }

  usageHint(): string {
    return (
      `Error: no tool call or answer found. Call a tool with <${CALL}>{"name": …, "arguments": {…}}</${CALL}> ` +
      `or give the final answer with <${ANSWER_TAG}>…</${ANSWER_TAG}>.`
    );
  }

  systemPrompt(tools: readonly Tool[]): string {
    const signatures = tools
      .map((t) =>
        JSON.stringify({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.parameters },
        }),
      )
      .join('\n');
    return [
      '# Tools',
      '',
      'You may call one or more functions to assist with the user query.',
      '',
      'You are provided with function signatures within <tools></tools> XML tags:',
      '<tools>',
      signatures,
      '</tools>',
      '',
      `For each function call, return a json object with function name and arguments within <${CALL}></${CALL}> XML tags:`,
      `<${CALL}>`,
      '{"name": <function-name>, "arguments": <args-json-object>}',
      `</${CALL}>`,
      `The results come back within <${RESPONSE}></${RESPONSE}> XML tags.`,
      `When you know the final answer, write it within <${ANSWER_TAG}></${ANSWER_TAG}> XML tags.`,
    ].join('\n');
  }
}
