/**
 * `agent-r1 compare-traces a b`: where two kernel traces (`log.traceKernels`) part, in words. Both files
 * are streamed a line at a time (a trace of a whole run can be gigabytes), and the comparison stops at
 * the first divergence.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import {
  type TracedCall,
  firstDivergence,
  formatTracedCall,
  parseTracedCall,
} from '@agent-r1/tensor/testing';

const CHUNK = 1 << 20;

/** The file's lines, read synchronously a megabyte at a time. */
function* fileLines(file: string): Generator<string> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new Error(`compare-traces: cannot read ${file}: ${e instanceof Error ? e.message : e}`);
  }
  try {
    const buffer = Buffer.alloc(CHUNK);
    const decoder = new StringDecoder('utf8');
    let carry = '';
    for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) {
      const parts = (carry + decoder.write(buffer.subarray(0, n))).split('\n');
      carry = parts.pop() ?? '';
      yield* parts;
    }
    carry += decoder.end();
    if (carry !== '') yield carry;
  } finally {
    closeSync(fd);
  }
}

/** The traced calls of a file, counted as they are read; a line that does not parse is named. */
class TraceReader implements Iterable<TracedCall> {
  count = 0;
  private line = 0;
  private readonly lines: Generator<string>;
  constructor(readonly file: string) {
    this.lines = fileLines(file);
  }
  *[Symbol.iterator](): Generator<TracedCall> {
    // next() by hand, not for-of: a comparison that stops early must not close the file, which drain()
    // goes on reading to count the calls left.
    for (let next = this.lines.next(); !next.done; next = this.lines.next()) {
      const text = next.value;
      this.line++;
      if (text === '') continue;
      let call: TracedCall;
      try {
        call = parseTracedCall(text);
      } catch (e) {
        throw new Error(`${this.file}:${this.line}: ${e instanceof Error ? e.message : e}`);
      }
      this.count++;
      yield call;
    }
  }
  /** Reads (and counts) what is left. */
  drain(): number {
    for (const _ of this);
    return this.count;
  }
  /** Closes the file without reading the rest. */
  close(): void {
    this.lines.return(undefined);
  }
}

/** The report, and whether the traces differ. */
export function compareTraceFiles(a: string, b: string): { report: string; diverged: boolean } {
  const [ra, rb] = [new TraceReader(a), new TraceReader(b)];
  const d = firstDivergence(ra, rb);
  if (!d) {
    const [na, nb] = [ra.drain(), rb.drain()];
    const lengths =
      na === nb ? `${na} calls` : `the first ${Math.min(na, nb)} calls (${a}: ${na}, ${b}: ${nb})`;
    return { report: `the traces agree over ${lengths}\n`, diverged: false };
  }
  ra.close();
  rb.close();
  const what =
    d.kind === 'kernel'
      ? 'the runs call different kernels (or shapes) here'
      : d.inputsEqual
        ? `operand(s) ${d.differing.join(', ')} differ while every input was equal: this call computed something else from the same inputs`
        : `operand(s) ${d.differing.join(', ')} differ, and so did an input: the cause is earlier (another kernel, or code outside the kernels)`;
  const report = [
    `the traces part at call ${d.index}: ${what}`,
    `  ${a}: ${formatTracedCall(d.a)}`,
    `  ${b}: ${formatTracedCall(d.b)}`,
    '',
  ].join('\n');
  return { report, diverged: true };
}
