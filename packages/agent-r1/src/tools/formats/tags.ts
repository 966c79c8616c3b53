/**
 * The compact tag format of Search-R1-style agents: each tool has a tag whose text is its single string
 * argument (`<search>capital of France</search>` → search({ query: 'capital of France' })); responses come
 * back as `<result>…</result>`.
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

export interface TagMapping {
  /** The tag the policy writes, e.g. 'search' for `<search>…</search>`. */
  tag: string;
  /** The registered tool it calls. */
  tool: string;
  /** The name of the tool's string argument that receives the tag's text (trimmed), e.g. 'query'. */
  argument: string;
}

export interface TagsFormatOptions extends ObservationWrapping {
  tags: readonly TagMapping[];
  /** The tag tool responses are wrapped in (default 'result'). */
  responseTag?: string;
}

const TAG_NAME = /^[A-Za-z_][\w.-]*$/;

export class TagsFormat implements ToolCallFormat {
  readonly name = 'tags';
  readonly stop: readonly string[];
  readonly tags: readonly TagMapping[];
  readonly responseTag: string;
  readonly #prefix: string;
  readonly #suffix: string;

  constructor(options: TagsFormatOptions) {
    this.tags = options.tags.map((t) => ({ ...t }));
    this.responseTag = options.responseTag ?? 'result';
    this.#prefix = options.observationPrefix ?? '\n';
    this.#suffix = options.observationSuffix ?? '\n';
    const seen = new Set<string>([ANSWER_TAG, this.responseTag]);
    if (!TAG_NAME.test(this.responseTag))
      throw new Error(`TagsFormat: invalid response tag "${this.responseTag}"`);
    if (this.responseTag === ANSWER_TAG)
      throw new Error(`TagsFormat: the response tag cannot be "${ANSWER_TAG}"`);
    if (this.tags.length === 0) throw new Error('TagsFormat: at least one tag mapping is needed');
    for (const t of this.tags) {
      if (!TAG_NAME.test(t.tag)) throw new Error(`TagsFormat: invalid tag "${t.tag}"`);
      if (seen.has(t.tag)) throw new Error(`TagsFormat: tag "${t.tag}" is used twice or is reserved`);
      if (!t.tool || !t.argument)
        throw new Error(`TagsFormat: tag "${t.tag}" needs a tool and an argument name`);
      seen.add(t.tag);
    }
    this.stop = [...this.tags.map((t) => `</${t.tag}>`), `</${ANSWER_TAG}>`];
  }

  parse(actionText: string): ParsedAction {
    const text = String(actionText);
    const { answer, errors } = parseAnswer(text);
    const found: { start: number; call: ToolCall }[] = [];
    for (const t of this.tags) {
      const { blocks, unclosed } = extractTagged(text, t.tag);
      for (const b of blocks)
        found.push({ start: b.start, call: { name: t.tool, args: { [t.argument]: b.content.trim() } } });
      if (unclosed > 0) errors.push(`unclosed <${t.tag}>: close it with </${t.tag}>`);
    }
    found.sort((a, b) => a.start - b.start);
    return { calls: found.map((f) => f.call), answer, errors };
  }

  /** Renders a call of a mapped tool (throws for a tool without a tag: that is a programming error). */
  renderCall(call: ToolCall): string {
    const t = this.tags.find((m) => m.tool === call.name);
    if (!t) throw new Error(`TagsFormat: no tag for tool "${call.name}"`);
    const value = call.args[t.argument];
    return `<${t.tag}>${typeof value === 'string' ? value : JSON.stringify(value ?? '')}</${t.tag}>`;
  }

  renderAnswer(answer: string): string {
    return `<${ANSWER_TAG}>${answer}</${ANSWER_TAG}>`;
  }

  renderObservation(responses: readonly string[]): string {
    const r = this.responseTag;
    return this.#prefix + responses.map((c) => `<${r}>${c}</${r}>`).join('\n') + this.#suffix;
  }

  usageHint(): string {
    const calls = this.tags.map((t) => `<${t.tag}>${t.argument}</${t.tag}>`).join(' or ');
    return `Error: no tool call or answer found. Call a tool with ${calls}, or give the final answer with <${ANSWER_TAG}>…</${ANSWER_TAG}>.`;
  }

  systemPrompt(tools: readonly Tool[]): string {
    const lines = this.tags.map((t) => {
      const tool = tools.find((x) => x.name === t.tool);
      const what = tool ? `: ${tool.description}` : '';
      return `- <${t.tag}>${t.argument}</${t.tag}> calls ${t.tool}${what}`;
    });
    return [
      'You can use these tools by writing their tags:',
      ...lines,
      `Each result comes back between <${this.responseTag}> and </${this.responseTag}>.`,
      `When you know the final answer, write it between <${ANSWER_TAG}> and </${ANSWER_TAG}>.`,
    ].join('\n');
  }
}
