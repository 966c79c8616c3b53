/**
 * The `compare` tool: labelled figures in, the same figures ordered from largest to smallest out
 * (`Cambodia 181,035 ; Djibouti 23,200` → `Cambodia 181,035 > Djibouti 23,200`). Ordering numbers is the
 * step of a comparison question a small policy does worst on its own (it has to weigh digit counts and
 * digits of two figures read in different turns); with the tool it copies the figures it read, then the
 * first name of the result, the same copying it does everywhere else. Bad arguments come back as failed
 * tool results that say what is wrong, never as exceptions.
 */
import type { Tool, ToolResult } from './tool.js';

export interface CompareArgs {
  /** `label number ; label number [; …]`: each item's figure is the number it ends with. */
  items: string;
}

export const COMPARE_TOOL = 'compare';

/** A figure at the end of an item: `-3`, `181,035`, `0.5`, `1,234.75`. */
const TRAILING_FIGURE = /(?:^|\s)(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)$/;

export interface LabelledFigure {
  label: string;
  /** The figure as written (kept for the result, so that it reads as the documents wrote it). */
  written: string;
  value: number;
}

/** Parses `label number ; label number …`; a string says what is wrong with it (`needs …`, `item 2 …`). */
export function parseCompareItems(text: string): LabelledFigure[] | string {
  const parts = text.split(';').map((p) => p.trim());
  if (parts.length < 2 || parts.some((p) => p === ''))
    return 'needs two or more items "name number" separated by ";", e.g. "Peru 1,285,216 ; Chile 756,102".';
  const items: LabelledFigure[] = [];
  for (const [i, part] of parts.entries()) {
    const m = TRAILING_FIGURE.exec(part);
    if (m === null) return `item ${i + 1} (${JSON.stringify(part)}) does not end with a number.`;
    const written = m[1];
    items.push({
      label: part.slice(0, part.length - written.length).trim(),
      written,
      value: Number(written.replace(/,/g, '')),
    });
  }
  return items;
}

/** The items from largest to smallest (ties keep their order), joined by ` > ` (` = ` between ties). */
export function formatComparison(items: readonly LabelledFigure[]): string {
  const sorted = items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => b.item.value - a.item.value || a.i - b.i);
  return sorted
    .map(({ item }, k) => {
      const text = item.label === '' ? item.written : `${item.label} ${item.written}`;
      if (k === 0) return text;
      return `${sorted[k - 1].item.value === item.value ? '=' : '>'} ${text}`;
    })
    .join(' ');
}

/** The `compare` tool (see the file comment). */
export function compareTool(options: { name?: string } = {}): Tool<CompareArgs> {
  const name = options.name ?? COMPARE_TOOL;
  return {
    name,
    description: 'Orders labelled numbers from largest to smallest ("Peru 1,285,216 ; Chile 756,102").',
    parameters: {
      type: 'object',
      properties: {
        items: { type: 'string', description: 'Items "name number" separated by ";".' },
      },
      required: ['items'],
      additionalProperties: false,
    },
    async execute(args): Promise<ToolResult> {
      const text = (args as Partial<CompareArgs> | null | undefined)?.items;
      if (typeof text !== 'string')
        return {
          content: `Error: ${name} needs an "items" string, e.g. {"items": "Peru 1,285,216 ; Chile 756,102"}.`,
          success: false,
        };
      const items = parseCompareItems(text);
      if (typeof items === 'string') return { content: `Error: ${name} ${items}`, success: false };
      return { content: formatComparison(items), success: true };
    },
  };
}
