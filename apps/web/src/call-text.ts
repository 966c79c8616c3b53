/**
 * What the page shows of a tool call's arguments: a search's query, the one text argument of a tool that
 * takes one (the compare tool's `values`), else the arguments as JSON.
 */
export function callArgumentsText(args: unknown): string {
  if (typeof args === 'object' && args !== null) {
    const values = Object.values(args);
    const query = (args as { query?: unknown }).query;
    if (typeof query === 'string') return query;
    if (values.length === 1 && typeof values[0] === 'string') return values[0];
  }
  return JSON.stringify(args);
}
