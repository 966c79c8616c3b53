/** The reference of an option tree, written from its schema: each key's type and rule, default and doc. */
import { type SchemaNode, type TSchema, isSection, keyPaths, nodeAt } from './schema.js';

/** A key's type and rule in words: 'integer >= 1', 'number in (0, 1]', 'one of: a, b'. */
export function describeRule(n: SchemaNode): string {
  if (n.enum) return `one of: ${n.enum.join(', ')}`;
  if (n.type === 'boolean') return 'boolean';
  if (n.type === 'string') return n.minLength ? 'non-empty string' : 'string';
  if (n.type === 'object') return 'object';
  const what = n.type === 'integer' ? 'integer' : 'number';
  const low = n.minimum ?? n.exclusiveMinimum;
  const high = n.maximum ?? n.exclusiveMaximum;
  const open = n.exclusiveMinimum !== undefined;
  const close = n.exclusiveMaximum !== undefined;
  if (low !== undefined && high !== undefined)
    return `${what} in ${open ? '(' : '['}${low}, ${high}${close ? ')' : ']'}`;
  if (low !== undefined) return `${what} ${open ? '>' : '>='} ${low}`;
  if (high !== undefined) return `${what} ${close ? '<' : '<='} ${high}`;
  return what;
}

const shown = (v: unknown) => (v === undefined ? '(unset)' : JSON.stringify(v));

/** One row per leaf key: path (with `prefix`), rule, default, doc. */
export function referenceRows(schema: TSchema, prefix = ''): string[][] {
  return keyPaths(schema)
    .map((p) => [p, nodeAt(schema, p)!] as const)
    .filter(([, n]) => !isSection(n))
    .map(([p, n]) => [prefix ? `${prefix}.${p}` : p, describeRule(n), shown(n.default), n.description ?? '']);
}

function table(rows: readonly string[][]): string[] {
  return [
    '| key | type | default | what it does |',
    '|---|---|---|---|',
    ...rows.map(
      ([key, rule, value, what]) =>
        `| \`${key}\` | ${rule} | \`${value}\` | ${what.replaceAll('|', '\\|')} |`,
    ),
  ];
}

/** A markdown reference: the top-level keys, then a table per section with the section's doc above it. */
export function markdownReference(schema: TSchema, prefix = ''): string {
  const join = (k: string) => (prefix ? `${prefix}.${k}` : k);
  const entries = Object.entries((schema as unknown as SchemaNode).properties ?? {});
  const leaves = entries
    .filter(([, n]) => !isSection(n))
    .map(([k, n]) => [join(k), describeRule(n), shown(n.default), n.description ?? '']);
  const out = leaves.length > 0 ? [...table(leaves), ''] : [];
  for (const [k, n] of entries.filter(([, n]) => isSection(n))) {
    out.push(`### \`${join(k)}\``, '');
    if (n.description) out.push(n.description, '');
    out.push(...table(referenceRows(n as unknown as TSchema, join(k))), '');
  }
  return out.join('\n');
}

/** A plain-text reference for the terminal: `key  rule  (default)  doc`, one key a line. */
export function textReference(schema: TSchema, prefix = ''): string {
  return referenceRows(schema, prefix)
    .map(([key, rule, value, what]) => `${key}  ${rule}  (default ${value})\n    ${what}`)
    .join('\n');
}
