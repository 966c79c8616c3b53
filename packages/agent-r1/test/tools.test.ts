import { describe, expect, it } from 'vitest';
import { type Tool, ToolRegistry, validateArgs } from '../src/index.js';

function tool(name: string, parameters: Tool['parameters'] = { type: 'object' }): Tool {
  return {
    name,
    description: `the ${name} tool`,
    parameters,
    execute: async () => ({ content: name, success: true }),
  };
}

const searchSchema: Tool['parameters'] = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1 },
    top_k: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
    mode: { type: 'string', enum: ['web', 'wiki'] },
    filters: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' } }, required: ['field'] },
    },
  },
  required: ['query'],
  additionalProperties: false,
};

describe('ToolRegistry', () => {
  it('registers, gets and lists tools in order', () => {
    const r = new ToolRegistry([tool('search')]).register(tool('calc'));
    expect(r.names()).toEqual(['search', 'calc']);
    expect(r.list().map((t) => t.name)).toEqual(['search', 'calc']);
    expect(r.get('calc').name).toBe('calc');
    expect(r.has('search')).toBe(true);
    expect(r.find('nope')).toBeUndefined();
    expect(r.size).toBe(2);
  });

  it('rejects a duplicate name, naming it', () => {
    const r = new ToolRegistry([tool('search')]);
    expect(() => r.register(tool('search'))).toThrow(/"search" is already registered/);
  });

  it('rejects an unknown tool, naming it and listing the known ones', () => {
    const r = new ToolRegistry([tool('search'), tool('calc')]);
    expect(() => r.get('serch')).toThrow('unknown tool "serch"; available: search, calc');
    expect(() => new ToolRegistry().get('x')).toThrow('available: (none)');
  });

  it('rejects a nameless tool', () => {
    expect(() => new ToolRegistry().register(tool(''))).toThrow(/non-empty name/);
  });
});

describe('validateArgs', () => {
  const search = tool('search', searchSchema);

  it('accepts valid arguments and fills in defaults on a copy', () => {
    const args = { query: 'nile' };
    const v = validateArgs(search, args);
    expect(v).toEqual({ ok: true, args: { query: 'nile', top_k: 3 } });
    expect(args).toEqual({ query: 'nile' });
  });

  it('names a missing required property', () => {
    expect(validateArgs(search, {})).toEqual({
      ok: false,
      error: 'invalid arguments for tool "search": missing required property "query"',
    });
  });

  it('reports every problem, with readable paths', () => {
    const v = validateArgs(search, {
      query: '',
      top_k: 2.5,
      mode: 'x',
      extra: 1,
      filters: [{ field: 1 }, {}],
    });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.error).toMatch(/^invalid arguments for tool "search": /);
    expect(v.error).toContain('unexpected property "extra"');
    expect(v.error).toContain('query must NOT have fewer than 1 characters');
    expect(v.error).toContain('top_k must be integer');
    expect(v.error).toContain('mode must be one of "web", "wiki"');
    expect(v.error).toContain('filters[0].field must be string');
    expect(v.error).toContain('missing required property "field" in filters[1]');
  });

  it('rejects non-object arguments without throwing', () => {
    for (const bad of [null, 'query', 3, [1], undefined]) {
      const v = validateArgs(search, bad);
      expect(v.ok).toBe(false);
      if (!v.ok) expect(v.error).toMatch(/^invalid arguments for tool "search": arguments must be/);
    }
    const v = validateArgs(search, { query: () => 1 });
    expect(v).toEqual({ ok: false, error: 'invalid arguments for tool "search": not plain data' });
  });

  it('reports an invalid schema instead of throwing', () => {
    const broken = tool('broken', { type: 'object', required: 'query' as unknown as string[] });
    const v = validateArgs(broken, {});
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.error).toMatch(/^tool "broken" has an invalid schema/);
  });
});
