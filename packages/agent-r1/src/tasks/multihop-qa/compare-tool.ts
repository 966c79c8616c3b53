/**
 * The `compare` tool: the agent writes the numbers it has read, each after a label
 * (`Peru 1,285,216 ; Brazil 8,515,767`), and the tool names the label of the largest (`Largest: Brazil`:
 * the label after a space, so that it is the same tokens as in running text and can be copied). It knows
 * nothing of the question or the corpus: what it compares is what the policy wrote, so a number misread or
 * mislabelled gives a wrong answer. A small model reads and copies well but compares digit strings badly;
 * the arithmetic is the tool's, the reading stays the policy's.
 */
import type { Tool, ToolResult } from '../../tools/tool.js';

export const COMPARE_TOOL = 'compare';

/**
 * What the result's label follows. With the tool on, the tokenizer makes it one special token: the copy
 * head keys a token by the hidden state before it, and this token, unlike a colon, occurs nowhere else, so
 * "the name after the comparison's verdict" is one dot product for the answer to copy.
 */
export const LARGEST = 'Largest:';

export interface CompareArgs {
  values: string;
}

export interface LabelledValue {
  label: string;
  value: number;
}

/** A label, then a number written as the documents write it (`1,285,216`, `0.44`). */
const ITEM = /^(.*?\S)\s+(\d[\d,]*(?:\.\d+)?)$/;

/**
 * `Peru 1,285,216 ; Brazil 8,515,767` → the labelled values, or an error naming the part that is not
 * `label number`. At least two items.
 */
export function parseCompareValues(text: string): LabelledValue[] | { error: string } {
  const parts = text.split(';').map((p) => p.trim());
  if (parts.length < 2)
    return { error: `compare needs two or more 'label number' items separated by ';', got "${text}"` };
  const items: LabelledValue[] = [];
  for (const part of parts) {
    const m = ITEM.exec(part);
    if (!m) return { error: `compare: "${part}" is not 'label number' (e.g. 'Peru 1,285,216')` };
    items.push({ label: m[1], value: Number(m[2].replace(/,/g, '')) });
  }
  return items;
}

/** The text of a call comparing `items`, in the tool's syntax. */
export function compareValuesText(items: readonly { label: string; value: string }[]): string {
  return items.map((i) => `${i.label} ${i.value}`).join(' ; ');
}

/** `Largest: label`; a tie is reported as such (`Tie: a, b`) rather than broken by position. */
export function largest(items: readonly LabelledValue[]): ToolResult {
  const top = Math.max(...items.map((i) => i.value));
  const winners = items.filter((i) => i.value === top);
  if (winners.length > 1) return { content: `Tie: ${winners.map((w) => w.label).join(', ')}`, success: true };
  return { content: `${LARGEST} ${winners[0].label}`, success: true };
}

export function compareTool(): Tool<CompareArgs> {
  return {
    name: COMPARE_TOOL,
    description: "Which of several numbers is the largest: 'label number ; label number' → 'Largest: label'.",
    parameters: {
      type: 'object',
      properties: {
        values: { type: 'string', description: "'label number' items separated by ';'" },
      },
      required: ['values'],
    },
    async execute(args) {
      const values = (args as Partial<CompareArgs> | null | undefined)?.values;
      if (typeof values !== 'string') return { content: 'compare: values must be a string', success: false };
      const items = parseCompareValues(values);
      return 'error' in items ? { content: items.error, success: false } : largest(items);
    },
  };
}
