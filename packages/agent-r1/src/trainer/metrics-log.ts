/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The metrics of a run as JSON lines: one object per step in `<dir>/metrics.jsonl`, written with one
 * unbuffered write per line so a crash loses at most the line being written. Non-finite numbers (NaN, ±∞)
 * are stored as null and read back as NaN.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '@agent-r1/nn';

/** One step's record: the step, the wall-clock time, the seconds since the log was opened, and metrics. */
export interface MetricsRecord {
  step: number;
  /** Unix time of the write, in milliseconds. */
  time: number;
  /** Seconds since the log was opened. */
  elapsed: number;
  [metric: string]: number;
}

export const METRICS_FILE = 'metrics.jsonl';
const RESERVED = new Set(['step', 'time', 'elapsed']);

export interface MetricsLogOptions {
  /** File name inside the directory (default `metrics.jsonl`). */
  fileName?: string;
  /**
   * When resuming at this step: records with `step >= fromStep` (written after the checkpoint being
   * resumed) are dropped before appending. Without it, an existing file is appended to as is.
   */
  fromStep?: number;
  /** The clock, in milliseconds (default `Date.now`). */
  now?: () => number;
}

export class MetricsLog {
  readonly path: string;
  private fd: number | undefined;
  private readonly now: () => number;
  private readonly opened: number;

  constructor(dir: string, options: MetricsLogOptions = {}) {
    this.path = join(dir, options.fileName ?? METRICS_FILE);
    this.now = options.now ?? Date.now;
    this.opened = this.now();
    mkdirSync(dirname(this.path), { recursive: true });
    if (options.fromStep !== undefined && existsSync(this.path)) {
      const kept = readMetrics(this.path).filter((r) => r.step < options.fromStep!);
      writeFileAtomicSync(this.path, kept.map(serialize).join(''));
    }
    this.fd = openSync(this.path, 'a');
  }

  /** Appends the record of `step`; `metrics` are numbers (not named step, time or elapsed). */
  append(step: number, metrics: Readonly<Record<string, number>> = {}): MetricsRecord {
    if (this.fd === undefined) throw new Error(`MetricsLog: ${this.path} is closed`);
    if (!Number.isInteger(step)) throw new Error(`MetricsLog: step must be an integer, got ${step}`);
    const t = this.now();
    const record: MetricsRecord = { step, time: t, elapsed: (t - this.opened) / 1000 };
    for (const [k, v] of Object.entries(metrics)) {
      if (RESERVED.has(k)) throw new Error(`MetricsLog: "${k}" is reserved and cannot be a metric name`);
      if (typeof v !== 'number')
        throw new Error(`MetricsLog: metric "${k}" must be a number, got ${typeof v}`);
      record[k] = v;
    }
    writeSync(this.fd, serialize(record));
    return record;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** Opens (creating the directory) `<dir>/metrics.jsonl` for appending. */
export function openMetricsLog(dir: string, options?: MetricsLogOptions): MetricsLog {
  return new MetricsLog(dir, options);
}

function serialize(record: MetricsRecord): string {
  return `${JSON.stringify(record, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))}\n`;
}

/**
 * Reads a metrics file back. A malformed last line (a write cut short by a crash) is skipped; a malformed
 * line elsewhere is an error naming the file and line.
 */
export function readMetrics(path: string): MetricsRecord[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: MetricsRecord[] = [];
  let last = lines.length - 1;
  while (last >= 0 && lines[last].trim() === '') last--;
  for (let i = 0; i <= last; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      if (i === last) break;
      throw new Error(`readMetrics: ${path}:${i + 1}: ${(e as Error).message}`);
    }
    if (
      typeof obj !== 'object' ||
      obj === null ||
      Array.isArray(obj) ||
      typeof (obj as { step?: unknown }).step !== 'number'
    )
      throw new Error(`readMetrics: ${path}:${i + 1}: expected an object with a numeric "step"`);
    const record = {} as MetricsRecord;
    for (const [k, v] of Object.entries(obj)) {
      if (v === null) record[k] = Number.NaN;
      else if (typeof v === 'number') record[k] = v;
    }
    out.push(record);
  }
  return out;
}

/** The values of one metric by step, skipping records that lack it. */
export function metricSeries(
  records: readonly MetricsRecord[],
  key: string,
): { step: number; value: number }[] {
  return records.filter((r) => key in r).map((r) => ({ step: r.step, value: r[key] }));
}
