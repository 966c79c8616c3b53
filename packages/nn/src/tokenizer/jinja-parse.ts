/** Parsing chat templates (see jinja.ts): tags into a tree of nodes, expressions with jinja2's precedence. */
import { type ETok, TemplateError, type Tok, lexExpr } from './jinja-lex.js';

export type Expr =
  | { e: 'lit'; v: unknown }
  | { e: 'name'; v: string }
  | { e: 'list'; items: Expr[]; tuple?: boolean }
  | { e: 'dict'; items: [Expr, Expr][] }
  | { e: 'attr'; obj: Expr; name: string }
  | { e: 'item'; obj: Expr; index: Expr }
  | { e: 'slice'; obj: Expr; parts: (Expr | null)[] }
  | { e: 'call'; fn: Expr; args: Expr[]; kwargs: [string, Expr][] }
  | { e: 'filter'; v: Expr; name: string; args: Expr[]; kwargs: [string, Expr][] }
  | { e: 'test'; v: Expr; name: string; args: Expr[]; negate: boolean }
  | { e: 'unary'; op: string; v: Expr }
  | { e: 'bin'; op: string; a: Expr; b: Expr }
  | { e: 'cond'; test: Expr; then: Expr; else: Expr | null };

export class ExprParser {
  i = 0;
  constructor(
    private readonly toks: ETok[],
    private readonly line: number,
    private readonly src: string,
  ) {}

  fail(why: string): never {
    throw new TemplateError(`chat template, line ${this.line}: ${why} in ${JSON.stringify(this.src.trim())}`);
  }
  peek(offset = 0): ETok | undefined {
    return this.toks[this.i + offset];
  }
  isOp(v: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.k === 'op' && t.v === v;
  }
  isName(v: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.k === 'name' && t.v === v;
  }
  expectOp(v: string): void {
    if (!this.isOp(v)) this.fail(`expected '${v}'`);
    this.i++;
  }
  name(): string {
    const t = this.peek();
    if (t?.k !== 'name') return this.fail('expected a name');
    this.i++;
    return t.v;
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
  end(): void {
    if (!this.done()) this.fail(`unexpected ${JSON.stringify((this.peek() as { v: unknown }).v)}`);
  }

  /** An expression, or a bare tuple `a, b` when `tuple`. */
  expr(tuple = false): Expr {
    const first = this.cond();
    if (!tuple || !this.isOp(',')) return first;
    const items = [first];
    while (this.isOp(',')) {
      this.i++;
      if (this.done() || this.isOp(')') || this.isOp('=')) break;
      items.push(this.cond());
    }
    return { e: 'list', items, tuple: true };
  }
  cond(): Expr {
    const then = this.or();
    if (!this.isName('if')) return then;
    this.i++;
    const test = this.or();
    let otherwise: Expr | null = null;
    if (this.isName('else')) {
      this.i++;
      otherwise = this.cond();
    }
    return { e: 'cond', test, then, else: otherwise };
  }
  or(): Expr {
    let a = this.and();
    while (this.isName('or')) {
      this.i++;
      a = { e: 'bin', op: 'or', a, b: this.and() };
    }
    return a;
  }
  and(): Expr {
    let a = this.not();
    while (this.isName('and')) {
      this.i++;
      a = { e: 'bin', op: 'and', a, b: this.not() };
    }
    return a;
  }
  not(): Expr {
    if (this.isName('not')) {
      this.i++;
      return { e: 'unary', op: 'not', v: this.not() };
    }
    return this.compare();
  }
  compare(): Expr {
    let a = this.math1();
    for (;;) {
      const t = this.peek();
      if (t?.k === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(t.v)) {
        this.i++;
        a = { e: 'bin', op: t.v, a, b: this.math1() };
      } else if (this.isName('in')) {
        this.i++;
        a = { e: 'bin', op: 'in', a, b: this.math1() };
      } else if (this.isName('not') && this.isName('in', 1)) {
        this.i += 2;
        a = { e: 'bin', op: 'not in', a, b: this.math1() };
      } else return a;
    }
  }
  math1(): Expr {
    let a = this.concat();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.toks[this.i++] as { v: string }).v;
      a = { e: 'bin', op, a, b: this.concat() };
    }
    return a;
  }
  concat(): Expr {
    let a = this.math2();
    while (this.isOp('~')) {
      this.i++;
      a = { e: 'bin', op: '~', a, b: this.math2() };
    }
    return a;
  }
  math2(): Expr {
    let a = this.pow();
    while (['*', '/', '//', '%'].some((o) => this.isOp(o))) {
      const op = (this.toks[this.i++] as { v: string }).v;
      a = { e: 'bin', op, a, b: this.pow() };
    }
    return a;
  }
  pow(): Expr {
    let a = this.unary();
    while (this.isOp('**')) {
      this.i++;
      a = { e: 'bin', op: '**', a, b: this.unary() };
    }
    return a;
  }
  unary(): Expr {
    if (this.isOp('-') || this.isOp('+')) {
      const op = (this.toks[this.i++] as { v: string }).v;
      return this.filters(this.postfix({ e: 'unary', op, v: this.unaryNoFilter() }));
    }
    return this.filters(this.postfix(this.primary()));
  }
  unaryNoFilter(): Expr {
    if (this.isOp('-') || this.isOp('+')) {
      const op = (this.toks[this.i++] as { v: string }).v;
      return { e: 'unary', op, v: this.unaryNoFilter() };
    }
    return this.postfix(this.primary());
  }
  primary(): Expr {
    const t = this.peek();
    if (!t) return this.fail('an expression ends too soon');
    this.i++;
    if (t.k === 'num' || t.k === 'str') return { e: 'lit', v: t.v };
    if (t.k === 'name') {
      const constants: Record<string, unknown> = {
        true: true,
        True: true,
        false: false,
        False: false,
        none: null,
        None: null,
      };
      return t.v in constants ? { e: 'lit', v: constants[t.v] } : { e: 'name', v: t.v };
    }
    if (t.v === '(') {
      if (this.isOp(')')) {
        this.i++;
        return { e: 'list', items: [], tuple: true };
      }
      const inner = this.expr(true);
      this.expectOp(')');
      return inner;
    }
    if (t.v === '[') {
      const items: Expr[] = [];
      while (!this.isOp(']')) {
        items.push(this.cond());
        if (!this.isOp(']')) this.expectOp(',');
      }
      this.i++;
      return { e: 'list', items };
    }
    if (t.v === '{') {
      const items: [Expr, Expr][] = [];
      while (!this.isOp('}')) {
        const key = this.cond();
        this.expectOp(':');
        items.push([key, this.cond()]);
        if (!this.isOp('}')) this.expectOp(',');
      }
      this.i++;
      return { e: 'dict', items };
    }
    return this.fail(`unexpected '${t.v}'`);
  }
  postfix(node: Expr): Expr {
    for (;;) {
      if (this.isOp('.')) {
        this.i++;
        const t = this.peek();
        if (t?.k === 'num') {
          this.i++;
          node = { e: 'item', obj: node, index: { e: 'lit', v: t.v } };
        } else node = { e: 'attr', obj: node, name: this.name() };
      } else if (this.isOp('[')) {
        this.i++;
        const parts: (Expr | null)[] = [null];
        let isSlice = false;
        while (!this.isOp(']')) {
          if (this.isOp(':')) {
            this.i++;
            isSlice = true;
            parts.push(null);
          } else parts[parts.length - 1] = this.cond();
        }
        this.i++;
        if (isSlice) node = { e: 'slice', obj: node, parts };
        else if (parts[0] === null) this.fail('an empty subscript');
        else node = { e: 'item', obj: node, index: parts[0] };
      } else if (this.isOp('(')) {
        node = { e: 'call', fn: node, ...this.args() };
      } else return node;
    }
  }
  args(): { args: Expr[]; kwargs: [string, Expr][] } {
    this.expectOp('(');
    const args: Expr[] = [];
    const kwargs: [string, Expr][] = [];
    while (!this.isOp(')')) {
      if (this.peek()?.k === 'name' && this.isOp('=', 1)) {
        const key = this.name();
        this.i++;
        kwargs.push([key, this.cond()]);
      } else args.push(this.cond());
      if (!this.isOp(')')) this.expectOp(',');
    }
    this.i++;
    return { args, kwargs };
  }
  filters(node: Expr): Expr {
    for (;;) {
      if (this.isOp('|')) {
        this.i++;
        const name = this.name();
        const { args, kwargs } = this.isOp('(') ? this.args() : { args: [], kwargs: [] };
        node = { e: 'filter', v: node, name, args, kwargs };
      } else if (this.isName('is')) {
        this.i++;
        const negate = this.isName('not');
        if (negate) this.i++;
        const t = this.peek();
        let name: string;
        if (t?.k === 'name') name = this.name();
        else if (t?.k === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(t.v)) {
          this.i++;
          name = t.v;
        } else return this.fail('expected a test name after "is"');
        let args: Expr[] = [];
        if (this.isOp('(')) args = this.args().args;
        else if (name === '==' || name === '!=' || ['equalto', 'sameas', 'eq', 'ne'].includes(name))
          args = [this.primary()];
        node = {
          e: 'test',
          v: node,
          name: name === 'True' ? 'true' : name === 'False' ? 'false' : name === 'None' ? 'none' : name,
          args,
          negate,
        };
      } else if (this.isOp('(')) {
        node = { e: 'call', fn: node, ...this.args() };
      } else return node;
    }
  }
}

function parseExpr(src: string, line: number, tuple = false): Expr {
  const p = new ExprParser(lexExpr(src, line), line, src);
  const e = p.expr(tuple);
  p.end();
  return e;
}

export type Node =
  | { n: 'text'; v: string }
  | { n: 'print'; v: Expr }
  | { n: 'if'; branches: [Expr | null, Node[]][] }
  | {
      n: 'for';
      target: string[];
      iter: Expr;
      filter: Expr | null;
      body: Node[];
      otherwise: Node[];
      line: number;
    }
  | { n: 'set'; target: Expr; value: Expr; line: number }
  | { n: 'break' }
  | { n: 'continue' };

const SUPPORTED_TAGS = 'if, elif, else, endif, for, endfor, set, break, continue';

/** Parses the token list into a tree; errors name the tag and its line. */
export function parse(toks: Tok[]): Node[] {
  let i = 0;
  const block = (ends: string[]): { body: Node[]; end: string; line: number } => {
    const body: Node[] = [];
    while (i < toks.length) {
      const t = toks[i++];
      if (t.t === 'text') body.push({ n: 'text', v: t.v });
      else if (t.t === 'print') body.push({ n: 'print', v: parseExpr(t.src, t.line) });
      else {
        const word = /^[A-Za-z_]+/.exec(t.src)?.[0] ?? '';
        const rest = t.src.slice(word.length);
        if (ends.includes(word)) return { body, end: t.src, line: t.line };
        if (word === 'if') body.push(parseIf(rest, t.line));
        else if (word === 'for') body.push(parseFor(rest, t.line));
        else if (word === 'set') {
          const eq = findAssign(rest);
          if (eq < 0)
            throw new TemplateError(
              `chat template, line ${t.line}: {% set %} blocks are not supported (only {% set x = … %})`,
            );
          body.push({
            n: 'set',
            target: parseExpr(rest.slice(0, eq), t.line, true),
            value: parseExpr(rest.slice(eq + 1), t.line, true),
            line: t.line,
          });
        } else if (word === 'break' || word === 'continue') body.push({ n: word });
        else
          throw new TemplateError(
            `chat template, line ${t.line}: the tag {% ${word || t.src} %} is not supported (supported: ${SUPPORTED_TAGS})`,
          );
      }
    }
    if (ends.length)
      throw new TemplateError(`chat template: a block is never closed (expected ${ends.join(' or ')})`);
    return { body, end: '', line: 0 };
  };
  const parseIf = (cond: string, line: number): Node => {
    const branches: [Expr | null, Node[]][] = [];
    let test: Expr | null = parseExpr(cond, line);
    for (;;) {
      const { body, end, line: at } = block(['elif', 'else', 'endif']);
      branches.push([test, body]);
      if (end.startsWith('endif')) return { n: 'if', branches };
      if (end.startsWith('elif')) test = parseExpr(end.slice(4), at);
      else {
        const last = block(['endif']);
        branches.push([null, last.body]);
        return { n: 'if', branches };
      }
    }
  };
  const parseFor = (src: string, line: number): Node => {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s+in\s+([\s\S]+)$/.exec(src);
    if (!m) throw new TemplateError(`chat template, line ${line}: cannot read {% for${src} %}`);
    const target = m[1].split(',').map((s) => s.trim());
    const toks = lexExpr(m[2], line);
    // `for x in xs if cond`: the iterable ends at a top-level `if` that has no `else`.
    const p = new ExprParser(toks, line, m[2]);
    const iter = p.or();
    let filter: Expr | null = null;
    if (p.isName('if')) {
      p.i++;
      filter = p.expr();
    }
    p.end();
    const { body, end } = block(['else', 'endfor']);
    const otherwise = end.startsWith('else') ? block(['endfor']).body : [];
    return { n: 'for', target, iter, filter, body, otherwise, line };
  };
  return block([]).body;
}

/** The index of the `=` of an assignment (not part of == != <= >=), outside strings. */
function findAssign(s: string): number {
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '=' && s[i + 1] !== '=' && !'=!<>'.includes(s[i - 1])) return i;
  }
  return -1;
}
