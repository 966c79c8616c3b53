/**
 * A tool of your own: a name, a description, JSON-schema parameters (checked before `execute` runs) and
 * an async `execute` that returns the text the policy will read.
 */
import type { Tool } from '@agent-r1/agent';

/** Integer arithmetic with + - * and parentheses, in the usual precedence; throws on anything else. */
export function calculate(expression: string): number {
  const tokens = expression.match(/\d+|\S/g) ?? [];
  let i = 0;
  const sum = (): number => {
    let value = product();
    while (tokens[i] === '+' || tokens[i] === '-') value += (tokens[i++] === '+' ? 1 : -1) * product();
    return value;
  };
  const product = (): number => {
    let value = factor();
    while (tokens[i] === '*') {
      i++;
      value *= factor();
    }
    return value;
  };
  const factor = (): number => {
    const token = tokens[i++];
    if (token === '-') return -factor();
    if (token === '(') {
      const value = sum();
      if (tokens[i++] !== ')') throw new Error('a "(" is never closed');
      return value;
    }
    if (token !== undefined && /^\d+$/.test(token)) return Number(token);
    throw new Error(token === undefined ? 'the expression ends too soon' : `unexpected "${token}"`);
  };
  const value = sum();
  if (i < tokens.length) throw new Error(`unexpected "${tokens[i]}"`);
  return value;
}

export const calculator: Tool<{ expression: string }> = {
  name: 'calculator',
  description: 'Evaluates integer arithmetic with + - * and parentheses, e.g. 37+48.',
  parameters: {
    type: 'object',
    properties: { expression: { type: 'string', description: 'The expression, e.g. 37+48.' } },
    required: ['expression'],
    additionalProperties: false,
  },
  async execute({ expression }) {
    try {
      return { content: String(calculate(expression)), success: true };
    } catch (e) {
      // A failed call is not an exception: the policy reads the message and may try again.
      return { content: `error: ${(e as Error).message}`, success: false };
    }
  },
};
