import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareTool, formatComparison, parseCompareItems } from '../src/tools/compare.js';

describe('compare tool', () => {
  const tool = compareTool();

  it('orders labelled figures from largest to smallest, as written', async () => {
    expect(await tool.execute({ items: 'Cambodia 181,035 ; Djibouti 23,200' })).toEqual({
      content: 'Cambodia 181,035 > Djibouti 23,200',
      success: true,
    });
    expect((await tool.execute({ items: 'Malta 316;Norway 323,802; Peru 1,285,216' })).content).toBe(
      'Peru 1,285,216 > Norway 323,802 > Malta 316',
    );
  });

  it('reads decimals, negatives, digits inside a label, and ties (kept in order)', () => {
    const items = parseCompareItems('Route 66 12.5 ; below -3 ; St. Kitts 12.50 ; 7');
    expect(items).toEqual([
      { label: 'Route 66', written: '12.5', value: 12.5 },
      { label: 'below', written: '-3', value: -3 },
      { label: 'St. Kitts', written: '12.50', value: 12.5 },
      { label: '', written: '7', value: 7 },
    ]);
    expect(formatComparison(items as never)).toBe('Route 66 12.5 = St. Kitts 12.50 > 7 > below -3');
  });

  it('says what is wrong with bad items, naming the item', async () => {
    expect(await tool.execute({ items: 'Peru 1,285,216' })).toEqual({
      content: expect.stringMatching(
        /^Error: compare needs two or more items "name number" separated by ";"/,
      ),
      success: false,
    });
    expect((await tool.execute({ items: 'Peru 5 ; ; Chile 3' })).content).toMatch(/two or more items/);
    expect((await tool.execute({ items: 'Peru 5 ; Chile' })).content).toBe(
      'Error: compare item 2 ("Chile") does not end with a number.',
    );
    // A figure glued to a word is not a figure: `Chile3`.
    expect((await tool.execute({ items: 'Peru 5 ; Chile3' })).success).toBe(false);
    expect((await tool.execute({} as never)).content).toMatch(/needs an "items" string/);
  });

  it('property: the result lists every item once, in non-increasing order, as parsed', () => {
    const label = fc.constantFrom('', 'Peru', 'Saint Lucia', 'Route 66', 'Guinea-Bissau');
    const figure = fc.oneof(
      fc
        .integer({ min: -1000, max: 100_000_000 })
        .map((n) => ({ written: n.toLocaleString('en-US'), value: n })),
      fc.integer({ min: 0, max: 99_999 }).map((n) => ({ written: (n / 100).toFixed(2), value: n / 100 })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(label, figure), { minLength: 2, maxLength: 6 }), (pairs) => {
        const text = pairs.map(([l, f]) => `${l} ${f.written}`).join(' ; ');
        const items = parseCompareItems(text);
        if (typeof items === 'string') throw new Error(items);
        expect(items.map((i) => i.value)).toEqual(pairs.map(([, f]) => f.value));
        const out = formatComparison(items);
        const values = out.split(/ [>=] /).map((part) => parseCompareItems(`${part} ; 0`));
        const ordered = values.map((v) => (typeof v === 'string' ? Number.NaN : v[0].value));
        expect(ordered).toHaveLength(pairs.length);
        for (let i = 1; i < ordered.length; i++) expect(ordered[i]).toBeLessThanOrEqual(ordered[i - 1]);
        expect([...ordered].sort((a, b) => a - b)).toEqual(
          pairs.map(([, f]) => f.value).sort((a, b) => a - b),
        );
      }),
    );
  });
});
