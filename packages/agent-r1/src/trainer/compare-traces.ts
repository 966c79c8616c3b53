/**
 * `agent-r1 compare-traces a b`: where two kernel traces (`log.traceKernels`) part, in words. The files
 * are read whole and parsed a line at a time as the comparison walks them.
 */
import { readFileSync } from 'node:fs';
import {
  type Divergence,
  type TracedCall,
  firstDivergence,
  formatTracedCall,
  parseTracedCall,
} from '@agent-r1/tensor/testing';

function* tracedCalls(text: string, file: string): Generator<TracedCall> {
  let line = 0;
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf('\n', start);
    const stop = end < 0 ? text.length : end;
    line++;
    if (stop > start) {
      try {
        yield parseTracedCall(text.slice(start, stop));
      } catch (e) {
        throw new Error(`${file}:${line}: ${e instanceof Error ? e.message : e}`);
      }
    }
    start = stop + 1;
  }
}

function readTrace(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`compare-traces: cannot read ${file}: ${e instanceof Error ? e.message : e}`);
  }
}

const count = (text: string) => (text.match(/\n/g)?.length ?? 0) + (text.endsWith('\n') || !text ? 0 : 1);

/** The report, and whether the traces differ. */
export function compareTraceFiles(a: string, b: string): { report: string; diverged: boolean } {
  const [textA, textB] = [readTrace(a), readTrace(b)];
  const d: Divergence | null = firstDivergence(tracedCalls(textA, a), tracedCalls(textB, b));
  const [na, nb] = [count(textA), count(textB)];
  if (!d) {
    const lengths =
      na === nb ? `${na} calls` : `the first ${Math.min(na, nb)} calls (${a}: ${na}, ${b}: ${nb})`;
    return { report: `the traces agree over ${lengths}\n`, diverged: false };
  }
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
