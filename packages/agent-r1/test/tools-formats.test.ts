import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermesFormat, type ParsedAction, TagsFormat, type Tool, type ToolCallFormat } from '../src/index.js';

const tags = new TagsFormat({
  tags: [
    { tag: 'search', tool: 'search', argument: 'query' },
    { tag: 'calc', tool: 'calculator', argument: 'expression' },
  ],
});
const hermes = new HermesFormat();
const formats: ToolCallFormat[] = [tags, hermes];

const searchTool: Tool = {
  name: 'search',
  description: 'Searches Wikipedia.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  execute: async () => ({ content: '', success: true }),
};

function expectShape(p: ParsedAction): void {
  expect(Object.keys(p).sort()).toEqual(['answer', 'calls', 'errors']);
  expect(Array.isArray(p.calls)).toBe(true);
  for (const c of p.calls) {
    expect(typeof c.name).toBe('string');
    expect(c.name.length).toBeGreaterThan(0);
    expect(c.args !== null && typeof c.args === 'object' && !Array.isArray(c.args)).toBe(true);
  }
  expect(p.answer === null || typeof p.answer === 'string').toBe(true);
  expect(Array.isArray(p.errors)).toBe(true);
  for (const e of p.errors) expect(typeof e).toBe('string');
}

describe('Hermes format', () => {
  it('parses one or more calls and the answer', () => {
    const text =
      'Let me look.\n<tool_call>\n{"name": "search", "arguments": {"query": "Nile"}}\n</tool_call>\n' +
      '<tool_call>{"name": "calc", "arguments": "{\\"x\\": 1}"}</tool_call><tool_call>{"name": "now"}</tool_call>';
    expect(hermes.parse(text)).toEqual({
      calls: [
        { name: 'search', args: { query: 'Nile' } },
        { name: 'calc', args: { x: 1 } },
        { name: 'now', args: {} },
      ],
      answer: null,
      errors: [],
    });
    expect(hermes.parse('<think>easy</think><answer> Paris </answer>')).toEqual({
      calls: [],
      answer: 'Paris',
      errors: [],
    });
  });

  it('turns malformed calls into error entries', () => {
    const p = hermes.parse(
      '<tool_call>{"name": "search", </tool_call>' +
        '<tool_call>{"arguments": {}}</tool_call>' +
        '<tool_call>[1, 2]</tool_call>' +
        '<tool_call>{"name": "a", "arguments": 5}</tool_call>' +
        '<tool_call>{"name": "b", "arguments": "nope"}</tool_call>' +
        '<tool_call>{"name": "ok", "arguments": {"q": 1}}</tool_call>' +
        '<tool_call>{"name": "late"',
    );
    expect(p.calls).toEqual([{ name: 'ok', args: { q: 1 } }]);
    expect(p.answer).toBeNull();
    expect(p.errors).toHaveLength(6);
    expect(p.errors[0]).toMatch(/^tool call 1: invalid JSON/);
    expect(p.errors[1]).toBe('tool call 2: missing "name"');
    expect(p.errors[2]).toMatch(/^tool call 3: expected a JSON object/);
    expect(p.errors[3]).toBe('tool call 4 ("a"): "arguments" must be a JSON object');
    expect(p.errors[4]).toBe('tool call 5 ("b"): "arguments" is a string that is not JSON');
    expect(p.errors[5]).toMatch(/^unclosed <tool_call>/);
    expect(hermes.parse('<answer>42').errors[0]).toMatch(/^unclosed <answer>/);
  });

  it('renders observations, stop strings and a system prompt', () => {
    expect(hermes.stop).toEqual(['</tool_call>', '</answer>']);
    expect(hermes.renderObservation(['a', 'b'])).toBe(
      '\n<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response>\n',
    );
    const chat = new HermesFormat({
      observationPrefix: '<|im_end|>\n<|im_start|>user\n',
      observationSuffix: '<|im_end|>\n<|im_start|>assistant\n',
    });
    expect(chat.renderObservation(['x'])).toBe(
      '<|im_end|>\n<|im_start|>user\n<tool_response>\nx\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
    const sys = hermes.systemPrompt([searchTool]);
    expect(sys).toContain('<tools>\n{"type":"function","function":{"name":"search"');
    expect(sys).toContain('<answer></answer>');
    expect(hermes.usageHint()).toContain('<tool_call>');
  });
});

describe('tags format', () => {
  it('parses calls in text order, with the argument trimmed, and the answer', () => {
    const p = tags.parse('<calc>2+2</calc> then <search>  capital of France </search><search>x</search>');
    expect(p).toEqual({
      calls: [
        { name: 'calculator', args: { expression: '2+2' } },
        { name: 'search', args: { query: 'capital of France' } },
        { name: 'search', args: { query: 'x' } },
      ],
      answer: null,
      errors: [],
    });
    expect(tags.parse('<answer>\nParis\n</answer>').answer).toBe('Paris');
    expect(tags.parse('<answer></answer>').answer).toBe('');
    expect(tags.parse('<serch>x</serch>')).toEqual({ calls: [], answer: null, errors: [] });
  });

  it('reports unclosed tags', () => {
    expect(tags.parse('<search>x').errors).toEqual(['unclosed <search>: close it with </search>']);
    expect(tags.parse('<search>a</search><search>b')).toEqual({
      calls: [{ name: 'search', args: { query: 'a' } }],
      answer: null,
      errors: ['unclosed <search>: close it with </search>'],
    });
  });

  it('renders observations, stop strings, hints and a system prompt', () => {
    expect(tags.stop).toEqual(['</search>', '</calc>', '</answer>']);
    expect(tags.renderObservation(['K7: 42'])).toBe('\n<result>K7: 42</result>\n');
    const info = new TagsFormat({
      tags: [{ tag: 'search', tool: 'search', argument: 'query' }],
      responseTag: 'information',
    });
    expect(info.renderObservation(['a', 'b'])).toBe(
      '\n<information>a</information>\n<information>b</information>\n',
    );
    expect(tags.usageHint()).toContain('<search>query</search> or <calc>expression</calc>');
    const sys = tags.systemPrompt([searchTool]);
    expect(sys).toContain('- <search>query</search> calls search: Searches Wikipedia.');
    expect(sys).toContain('- <calc>expression</calc> calls calculator');
    expect(() => tags.renderCall({ name: 'nope', args: {} })).toThrow(/no tag for tool "nope"/);
  });

  it('rejects bad mappings', () => {
    const m = { tool: 't', argument: 'a' };
    expect(() => new TagsFormat({ tags: [] })).toThrow(/at least one/);
    expect(() => new TagsFormat({ tags: [{ tag: 'answer', ...m }] })).toThrow(/reserved/);
    expect(() => new TagsFormat({ tags: [{ tag: 'a b', ...m }] })).toThrow(/invalid tag/);
    expect(
      () =>
        new TagsFormat({
          tags: [
            { tag: 'x', ...m },
            { tag: 'x', ...m },
          ],
        }),
    ).toThrow(/used twice/);
    expect(() => new TagsFormat({ tags: [{ tag: 'x', ...m }], responseTag: 'answer' })).toThrow();
  });
});

describe('parsers never throw (property)', () => {
  const fragments = [
    '<tool_call>',
    '</tool_call>',
    '<answer>',
    '</answer>',
    '<search>',
    '</search>',
    '<calc>',
    '</calc>',
    '{"name": "search", "arguments": {"query": "x"}}',
    '{"name": ',
    '{"arguments": 1}',
    '"',
    '{',
    '}',
    '<',
    '>',
    '/',
  ];
  const noisy = fc
    .array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom(...fragments)), { maxLength: 20 })
    .map((parts) => parts.join(''));

  for (const format of formats) {
    it(`${format.name}: random strings and tag soup give the documented shape`, () => {
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), noisy), (text) => {
          expectShape(format.parse(text));
        }),
        { numRuns: 400 },
      );
    });
  }
});

describe('render → parse round trip (property)', () => {
  // Tag arguments are trimmed and cannot contain their closing tag.
  const tagText = fc
    .string({ unit: 'grapheme', maxLength: 30 })
    .map((s) => s.trim())
    .filter((s) => !s.includes('</'));
  const json = fc.json({ maxDepth: 2 }).map((s) => JSON.parse(s) as unknown);
  const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,12}$/);

  it('hermes: any name and JSON arguments (including "</tool_call>" inside strings)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ name, args: fc.dictionary(fc.string(), json) }), { maxLength: 4 }),
        (calls) => {
          const text = calls.map((c) => hermes.renderCall(c)).join('\n');
          expect(hermes.parse(text)).toEqual({ calls, answer: null, errors: [] });
        },
      ),
      { numRuns: 200 },
    );
    const tricky = { name: 'search', args: { query: 'a </tool_call> <answer>b</answer>' } };
    expect(hermes.parse(hermes.renderCall(tricky))).toEqual({ calls: [tricky], answer: null, errors: [] });
  });

  it('tags: mapped tools with string arguments', () => {
    const call = fc.oneof(
      tagText.map((query) => ({ name: 'search', args: { query } })),
      tagText.map((expression) => ({ name: 'calculator', args: { expression } })),
    );
    fc.assert(
      fc.property(fc.array(call, { maxLength: 4 }), (calls) => {
        const text = calls.map((c) => tags.renderCall(c)).join(' ');
        expect(tags.parse(text)).toEqual({ calls, answer: null, errors: [] });
      }),
      { numRuns: 200 },
    );
  });

  for (const format of formats) {
    it(`${format.name}: answers`, () => {
      fc.assert(
        fc.property(tagText, (answer) => {
          expect(format.parse(format.renderAnswer(answer))).toEqual({ calls: [], answer, errors: [] });
        }),
        { numRuns: 200 },
      );
    });
  }
});
