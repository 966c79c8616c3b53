/**
 * JSONL input/output: loaders for user data in the common FlashRAG / Search-R1 layouts and atomic writers
 * for the dataset cache.
 *
 * Questions: `{"id"?: …, "question": "…", "golden_answers": ["…", …]}` (our own `answers`, `hops`, `kind`,
 * `supportingDocs` fields are read when present). Corpora: `{"id": …, "contents": "…", "title"?: "…"}`; when
 * `title` is missing and `contents` starts with a quoted first line (FlashRAG's `"Title"\ntext`), that line
 * is the title.
 *
 * Nothing is changed, dropped or guessed without a word: a file that is not UTF-8, a lone surrogate escape, a
 * field of the wrong type or range (`hops` 1..MAX_HOPS, `id` a string or an integer), a question the search
 * index would refuse as a query, all stop the load with `file:line` and the field.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { writeFileAtomicSync } from '@agent-r1/nn';
import { DEFAULT_QUERY_LIMITS, type QueryLimits, queryLimitProblem } from '../search/query.js';
import type { Doc, QaExample, QaKind } from './types.js';
import { decodeUtf8, describeUtf8Problem, hasLoneSurrogate } from './utf8.js';

/** Error for malformed JSONL input; the message names the file and the 1-based line. */
export class JsonlError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${file}:${line}: ${detail}`);
    this.name = 'JsonlError';
  }
}

/** A `\uD8xx`-`\uDFxx` escape somewhere in a line: only then are its strings walked for a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The top-level field of `record` whose value (or a key in it) holds a lone surrogate, if any. */
function loneSurrogateField(record: Record<string, unknown>): string | undefined {
  for (const [field, value] of Object.entries(record)) {
    if (hasLoneSurrogate(field)) return field;
    // A stack, not recursion: a deeply nested value must not overflow the call stack.
    const stack: unknown[] = [value];
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v === 'string') {
        if (hasLoneSurrogate(v)) return field;
      } else if (Array.isArray(v)) {
        for (const x of v) stack.push(x);
      } else if (v !== null && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (hasLoneSurrogate(k)) return field;
          stack.push(x);
        }
      }
    }
  }
  return undefined;
}

/** Parses JSONL text into objects with their 1-based line numbers; blank lines are skipped. */
export function parseJsonl(
  text: string,
  file = '<input>',
): { line: number; value: Record<string, unknown> }[] {
  const out: { line: number; value: Record<string, unknown> }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new JsonlError(file, i + 1, `invalid JSON (${(e as Error).message})`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new JsonlError(file, i + 1, 'expected a JSON object');
    }
    const bad = SURROGATE_ESCAPE.test(raw) ? loneSurrogateField(value as Record<string, unknown>) : undefined;
    if (bad !== undefined)
      throw new JsonlError(
        file,
        i + 1,
        `"${bad}" holds a lone surrogate escape (\\uD800-\\uDFFF without its pair): it is no character and would be read as U+FFFD`,
      );
    out.push({ line: i + 1, value: value as Record<string, unknown> });
  }
  return out;
}

function readText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
  const decoded = decodeUtf8(bytes);
  if ('problem' in decoded)
    throw new JsonlError(path, decoded.problem.line, describeUtf8Problem(decoded.problem));
  return decoded.text;
}

/** Most hops a question may give; more is a typo (or a float), not a question. */
export const MAX_HOPS = 16;

/** A value as an error shows it: JSON, cut to a few dozen characters. */
function shown(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** Why `v` is not an id (a string, or an integer JSON reads exactly), or undefined if it is one. */
function idProblem(v: unknown): string | undefined {
  if (typeof v === 'string' || Number.isSafeInteger(v)) return undefined;
  if (Number.isInteger(v))
    return `is ${shown(v)}, an integer too large to read exactly; write it as a string`;
  return `must be a string or an integer, got ${shown(v)}`;
}

type Element = 'text' | 'string' | 'id';
const ELEMENT = { text: 'non-empty strings', string: 'strings', id: 'strings or integers' } as const;

/** `r[field]` as strings: a non-empty array of `element`s (ids become strings), or throws. */
function stringList(
  r: Record<string, unknown>,
  field: string,
  fail: (d: string) => Error,
  element: Element,
): string[] {
  const v = r[field];
  if (!Array.isArray(v) || v.length === 0)
    throw fail(`"${field}" must be a non-empty array of ${ELEMENT[element]}, got ${shown(v)}`);
  return v.map((x, i) => {
    const ok =
      element === 'id'
        ? idProblem(x) === undefined
        : typeof x === 'string' && (element === 'string' || x.trim() !== '');
    if (!ok)
      throw fail(`"${field}" must be a non-empty array of ${ELEMENT[element]}; element ${i} is ${shown(x)}`);
    return String(x);
  });
}

/** Options of `questionsFromRecords` / `loadQuestionsJsonl`. */
export interface QuestionChecks {
  /**
   * A question must be a query the search index takes (the naive-RAG baseline searches with it), so one over
   * these limits stops the load, not the evaluation after it; default `DEFAULT_QUERY_LIMITS`.
   */
  queryLimits?: QueryLimits;
}

/**
 * Converts parsed question records (see the module comment) into examples; `file` names errors. Every field
 * is checked: a value the loader would have to change, drop or guess at is an error naming the line.
 */
export function questionsFromRecords(
  records: { line: number; value: Record<string, unknown> }[],
  file: string,
  checks: QuestionChecks = {},
): QaExample[] {
  const limits = checks.queryLimits ?? DEFAULT_QUERY_LIMITS;
  const stem = basename(file).replace(/\.jsonl$/, '');
  const seen = new Set<string>();
  let firstHops: { line: number; given: boolean } | undefined;
  return records.map(({ line, value: r }) => {
    const fail = (detail: string) => new JsonlError(file, line, detail);
    if (typeof r.question !== 'string' || r.question.trim() === '') {
      throw fail('missing or empty string field "question"');
    }
    const overLimit = queryLimitProblem(r.question, limits);
    if (overLimit !== undefined)
      throw fail(
        `"question" is over the search query limits: ${overLimit.replace(/^the query/, 'it')} ` +
          '(the naive-RAG baseline searches with the question itself)',
      );
    // FlashRAG's golden_answers, this package's answers, or a single answer (a string or a list).
    const answerField = ['golden_answers', 'answers', 'answer'].find((f) => r[f] !== undefined);
    if (answerField === undefined)
      throw fail('missing field "golden_answers" (a non-empty array of strings)');
    const answers =
      answerField === 'answer' && typeof r.answer === 'string' && r.answer.trim() !== ''
        ? [r.answer]
        : stringList(r, answerField, fail, 'text');
    const idIssue = r.id === undefined ? undefined : idProblem(r.id);
    if (idIssue !== undefined) throw fail(`"id" ${idIssue}`);
    const id = r.id === undefined ? `${stem}-${line}` : String(r.id);
    if (seen.has(id)) throw fail(`duplicate id "${id}"`);
    seen.add(id);
    const given = r.hops !== undefined;
    if (given && !(Number.isInteger(r.hops) && (r.hops as number) >= 1 && (r.hops as number) <= MAX_HOPS))
      throw fail(`"hops" must be an integer from 1 to ${MAX_HOPS} when given, got ${shown(r.hops)}`);
    // Questions are grouped by hops only when every one has them: a partial field would drop the groups unseen.
    firstHops ??= { line, given };
    if (given !== firstHops.given)
      throw fail(
        `"hops" is ${given ? 'given here but missing' : 'missing here but given'} on line ${firstHops.line}: ` +
          'give it on every question (they are then grouped by it) or on none',
      );
    if (r.kind !== undefined && (typeof r.kind !== 'string' || r.kind.trim() === ''))
      throw fail(`"kind" must be a non-empty string when given, got ${shown(r.kind)}`);
    // Optional lists: absent, null or [] is none; anything else must be a list of the right elements.
    const optional = (field: string, element: Element): string[] | undefined => {
      const v = r[field];
      if (v === undefined) return undefined;
      return v === null || (Array.isArray(v) && v.length === 0) ? [] : stringList(r, field, fail, element);
    };
    const ex: QaExample = {
      id,
      question: r.question,
      answers,
      hops: given ? (r.hops as number) : 0,
      kind: r.kind === undefined ? 'user' : (r.kind as QaKind),
      supportingDocs: optional('supportingDocs', 'id') ?? [],
    };
    const evidence = optional('evidence', 'string');
    if (evidence !== undefined) ex.evidence = evidence;
    const entities = optional('entities', 'string');
    if (entities !== undefined) ex.entities = entities;
    return ex;
  });
}

/** Loads questions from a JSONL file (`question` + `golden_answers`, or this package's own format). */
export function loadQuestionsJsonl(path: string, checks: QuestionChecks = {}): QaExample[] {
  return questionsFromRecords(parseJsonl(readText(path), path), path, checks);
}

/** Converts parsed corpus records into documents; `file` names errors. */
export function corpusFromRecords(
  records: { line: number; value: Record<string, unknown> }[],
  file: string,
): Doc[] {
  const seen = new Set<string>();
  return records.map(({ line, value: r }) => {
    if (r.id === undefined) throw new JsonlError(file, line, 'missing field "id" (a string or an integer)');
    const idIssue = idProblem(r.id);
    if (idIssue !== undefined) throw new JsonlError(file, line, `"id" ${idIssue}`);
    const id = String(r.id);
    if (seen.has(id)) throw new JsonlError(file, line, `duplicate id "${id}"`);
    seen.add(id);
    const text = r.contents ?? r.text;
    if (typeof text !== 'string') throw new JsonlError(file, line, 'missing string field "contents"');
    // null is "no title" (as exports write it); any other non-string would be dropped unseen.
    if (r.title !== undefined && r.title !== null && typeof r.title !== 'string')
      throw new JsonlError(file, line, `"title" must be a string when given, got ${shown(r.title)}`);
    let title = typeof r.title === 'string' ? r.title : '';
    let contents = text;
    if (title === '') {
      const m = /^"([^"\n]*)"\n/.exec(text);
      if (m) {
        title = m[1];
        contents = text.slice(m[0].length);
      }
    }
    return { id, title, contents };
  });
}

/** Loads a retrieval corpus from a JSONL file (`{"id", "contents", "title"?}` per line). */
export function loadCorpusJsonl(path: string): Doc[] {
  return corpusFromRecords(parseJsonl(readText(path), path), path);
}

/** Serialises rows as JSONL (one JSON object per line, trailing newline). */
export function toJsonl(rows: readonly unknown[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
}

/** Writes rows as JSONL atomically. */
export function writeJsonlAtomic(path: string, rows: readonly unknown[]): void {
  writeFileAtomicSync(path, toJsonl(rows));
}
