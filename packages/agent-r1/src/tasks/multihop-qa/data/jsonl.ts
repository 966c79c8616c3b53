/**
 * JSONL input/output: loaders for user data in the common FlashRAG / Search-R1 layouts and atomic writers
 * for the dataset cache.
 *
 * Questions: `{"id"?: …, "question": "…", "golden_answers": ["…", …]}` (our own `answers`, `hops`, `kind`,
 * `supportingDocs` fields are read when present). Corpora: `{"id": …, "contents": "…", "title"?: "…"}`; when
 * `title` is missing and `contents` starts with a quoted first line (FlashRAG's `"Title"\ntext`), that line
 * is the title.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { writeFileAtomicSync } from '@agent-r1/nn';
import type { Doc, QaExample, QaKind } from './types.js';

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
    out.push({ line: i + 1, value: value as Record<string, unknown> });
  }
  return out;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
}

function stringArray(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' || typeof x === 'number')) {
    return v.map((x) => String(x));
  }
  return undefined;
}

/** Converts parsed question records (see the module comment) into examples; `file` names errors. */
export function questionsFromRecords(
  records: { line: number; value: Record<string, unknown> }[],
  file: string,
): QaExample[] {
  const stem = basename(file).replace(/\.jsonl$/, '');
  const seen = new Set<string>();
  return records.map(({ line, value: r }) => {
    if (typeof r.question !== 'string' || r.question.trim() === '') {
      throw new JsonlError(file, line, 'missing or empty string field "question"');
    }
    const answers = stringArray(r.golden_answers ?? r.answers ?? r.answer);
    if (answers === undefined || answers.some((a) => a.trim() === '')) {
      throw new JsonlError(file, line, '"golden_answers" must be a non-empty array of non-empty strings');
    }
    const id = r.id === undefined ? `${stem}-${line}` : String(r.id);
    if (seen.has(id)) throw new JsonlError(file, line, `duplicate id "${id}"`);
    seen.add(id);
    const supporting = stringArray(r.supportingDocs) ?? [];
    const ex: QaExample = {
      id,
      question: r.question,
      answers,
      hops: typeof r.hops === 'number' ? r.hops : 0,
      kind: typeof r.kind === 'string' ? (r.kind as QaKind) : 'user',
      supportingDocs: supporting,
    };
    if (Array.isArray(r.evidence)) ex.evidence = r.evidence.map(String);
    if (Array.isArray(r.entities)) ex.entities = r.entities.map(String);
    return ex;
  });
}

/** Loads questions from a JSONL file (`question` + `golden_answers`, or this package's own format). */
export function loadQuestionsJsonl(path: string): QaExample[] {
  return questionsFromRecords(parseJsonl(readText(path), path), path);
}

/** Converts parsed corpus records into documents; `file` names errors. */
export function corpusFromRecords(
  records: { line: number; value: Record<string, unknown> }[],
  file: string,
): Doc[] {
  const seen = new Set<string>();
  return records.map(({ line, value: r }) => {
    if (typeof r.id !== 'string' && typeof r.id !== 'number') {
      throw new JsonlError(file, line, 'missing field "id" (string or number)');
    }
    const id = String(r.id);
    if (seen.has(id)) throw new JsonlError(file, line, `duplicate id "${id}"`);
    seen.add(id);
    const text = r.contents ?? r.text;
    if (typeof text !== 'string') throw new JsonlError(file, line, 'missing string field "contents"');
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
