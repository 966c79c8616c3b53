/** Lexing chat templates (see jinja.ts): the template into text and tags, with jinja2's whitespace rules;
 * a tag's expression into tokens. */

export class TemplateError extends Error {}

export type Tok =
  | { t: 'text'; v: string }
  | { t: 'print'; src: string; line: number }
  | { t: 'stmt'; src: string; line: number };

/** Splits a template into text, {{ }} and {% %} pieces, applying the whitespace rules (comments dropped). */
export function lex(source: string): Tok[] {
  // jinja2's keep_trailing_newline=False: one newline at the very end of the template is dropped.
  const template = source.replace(/\r?\n$/, '');
  const out: Tok[] = [];
  const open = /\{\{|\{%|\{#/g;
  let at = 0;
  let trimNextNewline = false;
  let stripNext = false;
  const lineAt = (i: number) => template.slice(0, i).split('\n').length;
  for (let m = open.exec(template); m !== null; m = open.exec(template)) {
    const start = m.index;
    const kind = m[0];
    let text = template.slice(at, start);
    if (stripNext) text = text.replace(/^\s+/, '');
    else if (trimNextNewline) text = text.replace(/^\r?\n/, '');
    // Whether the text begins a line of the source (lstrip_blocks strips a tag's indentation only there).
    const from = start - text.length;
    const lineStarting = from === 0 || template[from - 1] === '\n';
    const modifier = template[start + 2];
    if (modifier === '-') text = text.replace(/\s+$/, '');
    else if (kind !== '{{' && modifier !== '+') {
      const lineStart = text.lastIndexOf('\n') + 1;
      if ((lineStart > 0 || lineStarting) && /^[ \t]*$/.test(text.slice(lineStart)))
        text = text.slice(0, lineStart);
    }
    if (text) out.push({ t: 'text', v: text });
    const close = kind === '{{' ? '}}' : kind === '{%' ? '%}' : '#}';
    const end = findClose(template, start + 2, close, kind === '{#');
    if (end < 0) throw new TemplateError(`chat template, line ${lineAt(start)}: ${kind} is never closed`);
    let inner = template.slice(start + 2, end);
    if (inner.startsWith('-') || inner.startsWith('+')) inner = inner.slice(1);
    const closeModifier = inner.endsWith('-') || inner.endsWith('+') ? inner[inner.length - 1] : '';
    if (closeModifier) inner = inner.slice(0, -1);
    stripNext = closeModifier === '-';
    trimNextNewline = kind !== '{{' && closeModifier !== '+'; // trim_blocks
    if (kind === '{{') out.push({ t: 'print', src: inner, line: lineAt(start) });
    else if (kind === '{%') out.push({ t: 'stmt', src: inner.trim(), line: lineAt(start) });
    at = end + 2;
    open.lastIndex = at;
  }
  let rest = template.slice(at);
  if (stripNext) rest = rest.replace(/^\s+/, '');
  else if (trimNextNewline) rest = rest.replace(/^\r?\n/, '');
  if (rest) out.push({ t: 'text', v: rest });
  return out;
}

/** The index of `close` after `from`, skipping quoted strings inside a tag. */
function findClose(s: string, from: number, close: string, comment: boolean): number {
  if (comment) return s.indexOf(close, from);
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (s.startsWith(close, i)) return i;
  }
  return -1;
}

export type ETok =
  | { k: 'num'; v: number }
  | { k: 'str'; v: string }
  | { k: 'name'; v: string }
  | { k: 'op'; v: string };

/** Operators, longest first where one is the prefix of another. */
const OPS = '// ** == != <= >= + - * / % ~ < > = ( ) [ ] { } , . : |'.split(' ');
const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '0': '\0',
};

export function lexExpr(src: string, line: number): ETok[] {
  const out: ETok[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new TemplateError(`chat template, line ${line}: ${why} in ${JSON.stringify(src.trim())}`);
  };
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'") {
      let v = '';
      i++;
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\\') {
          const e = src[i + 1];
          if (e === 'u') {
            v += String.fromCharCode(Number.parseInt(src.slice(i + 2, i + 6), 16));
            i += 6;
            continue;
          }
          v += ESCAPES[e] ?? `\\${e}`;
          i += 2;
        } else v += src[i++];
      }
      if (i >= src.length) fail('an unterminated string');
      i++;
      // Adjacent string literals join, as in Python.
      const last = out[out.length - 1];
      if (last?.k === 'str') last.v += v;
      else out.push({ k: 'str', v });
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i))!;
      out.push({ k: 'num', v: Number(m[0]) });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      out.push({ k: 'name', v: m[0] });
      i += m[0].length;
    } else {
      const op = OPS.find((o) => src.startsWith(o, i));
      if (!op) fail(`an unexpected character ${JSON.stringify(c)}`);
      out.push({ k: 'op', v: op! });
      i += op!.length;
    }
  }
  return out;
}
