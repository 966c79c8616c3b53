/**
 * The `compare` tool: the agent writes the numbers it has read, each after a label
 * (`Peru 1,285,216 ; Brazil 8,515,767`), and the tool names the label of the largest (`Largest: Brazil`:
 * the label after a space, so that it is the same tokens as in running text and can be copied); or it writes
 * the statements it has read (`Mongolia is landlocked ; Peru is not landlocked`), and the tool names the one
 * of which the property holds (`Only: Mongolia`). It knows nothing of the question or the corpus: what it
 * compares is what the policy wrote, so a number or a `not` misread gives a wrong answer. A small model reads
 * and copies well but compares digit strings, or tells which of two sentences far back had a `not`, badly;
 * the comparison is the tool's, the reading stays the policy's.
 */
import type { Tool, ToolResult } from '../../tools/tool.js';

export const COMPARE_TOOL = 'compare';

/**
 * What the result's label follows. With the tool on, the tokenizer makes it one special token: the copy
 * head keys a token by the hidden state before it, and this token, unlike a colon, occurs nowhere else, so
 * "the name after the comparison's verdict" is one dot product for the answer to copy.
 */
export const LARGEST = 'Largest:';

/** What the label follows where exactly one statement holds; a special token like LARGEST, for the same reason. */
export const ONLY = 'Only:';

/**
 * The label a compare result names (`Largest: Brazil` → `Brazil`, `Only: Mongolia`); null for a tie, a
 * refusal or any other text.
 */
export function verdictLabel(content: string): string | null {
  for (const marker of [LARGEST, ONLY])
    if (content.startsWith(`${marker} `)) return content.slice(marker.length + 1).trim();
  return null;
}

export interface CompareArgs {
  values: string;
}

export interface LabelledValue {
  label: string;
  value: number;
}

export interface Statement {
  label: string;
  /** False where the statement says `not`. */
  holds: boolean;
  property: string;
}

/** A label, then a number written as the documents write it (`1,285,216`, `0.44`). */
const ITEM = /^(.*?\S)\s+(\d[\d,]*(?:\.\d+)?)$/;
/** `label is property` or `label is not property`, the label up to the first ` is `. */
const STATEMENT = /^(.*?\S) is (not )?(\S.*)$/;

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

/**
 * The items of a call: all numbers (`parseCompareValues`) or all statements of one property
 * (`Mongolia is landlocked ; Peru is not landlocked`), else an error naming the part that is neither, or
 * the two that do not go together.
 */
export function parseCompareItems(
  text: string,
): { numbers: LabelledValue[] } | { statements: Statement[] } | { error: string } {
  const numbers = parseCompareValues(text);
  if (!('error' in numbers)) return { numbers };
  const parts = text.split(';').map((p) => p.trim());
  if (parts.length < 2) return numbers;
  const neither = parts.find((p) => !ITEM.test(p) && !STATEMENT.test(p));
  if (neither !== undefined)
    return {
      error: `compare: "${neither}" is neither 'label number' (e.g. 'Peru 1,285,216') nor 'label is [not] property' (e.g. 'Peru is not landlocked')`,
    };
  const number = parts.find((p) => ITEM.test(p));
  if (number !== undefined) {
    const statement = parts.find((p) => !ITEM.test(p));
    return {
      error: `compare: "${number}" is a number and "${statement}" a statement: compare like with like`,
    };
  }
  const statements = parts.map((part) => {
    const [, label, not, property] = STATEMENT.exec(part)!;
    return { label, holds: not === undefined, property };
  });
  const other = statements.find((x) => x.property !== statements[0].property);
  if (other)
    return {
      error: `compare: the statements are about "${statements[0].property}" and "${other.property}": compare one property at a time`,
    };
  return { statements };
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

/**
 * `Only: label` where the property holds of exactly one statement; else which hold (`None is landlocked`,
 * `More than one is landlocked: a, b`).
 */
export function onlyOneHolding(statements: readonly Statement[]): ToolResult {
  const holding = statements.filter((x) => x.holds);
  const { property } = statements[0];
  if (holding.length === 1) return { content: `${ONLY} ${holding[0].label}`, success: true };
  if (holding.length === 0) return { content: `None is ${property}`, success: true };
  return {
    content: `More than one is ${property}: ${holding.map((x) => x.label).join(', ')}`,
    success: true,
  };
}

export function compareTool(): Tool<CompareArgs> {
  return {
    name: COMPARE_TOOL,
    description:
      "Which of several numbers is the largest: 'label number ; label number' → 'Largest: label'; or of which label a property holds: 'label is P ; label is not P' → 'Only: label'.",
    parameters: {
      type: 'object',
      properties: {
        values: {
          type: 'string',
          description: "'label number' items, or 'label is [not] property' statements, separated by ';'",
        },
      },
      required: ['values'],
    },
    async execute(args) {
      const values = (args as Partial<CompareArgs> | null | undefined)?.values;
      if (typeof values !== 'string') return { content: 'compare: values must be a string', success: false };
      const items = parseCompareItems(values);
      if ('error' in items) return { content: items.error, success: false };
      return 'numbers' in items ? largest(items.numbers) : onlyOneHolding(items.statements);
    },
  };
}
