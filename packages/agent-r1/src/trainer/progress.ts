/**
 * Progress of a stage (training steps, rollouts, evaluation) with live fields such as reward, EM and loss:
 * a cli-progress bar when the stream is a TTY, plain periodic log lines otherwise (CI, files), or nothing.
 */
import cliProgress from 'cli-progress';
import type { ProgressMode } from './config.js';

export type ProgressFields = Readonly<Record<string, number | string>>;

export interface Progress {
  /** Begins the stage: `total` units, `done` of them already (a resumed stage; default 0). */
  start(total: number, fields?: ProgressFields, done?: number): void;
  /** `done` units are finished; `fields` replace the named fields (others stay). */
  update(done: number, fields?: ProgressFields): void;
  /** Ends the stage (prints the final state). */
  stop(): void;
}

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressOptions {
  /** The stage's name, e.g. 'train' or 'eval'. */
  label: string;
  /** Default 'auto': a bar when `stream` is a TTY, log lines otherwise. */
  mode?: ProgressMode;
  /** Default `process.stdout`. */
  stream?: ProgressStream;
  /** Least time between two log lines (default 10 s); the first and last are always written. */
  intervalMs?: number;
  /** The clock, in milliseconds (default `Date.now`). */
  now?: () => number;
}

/** A number compact enough for a status line: 4 significant digits, exponents for very large or small. */
export function formatValue(v: number | string): string {
  if (typeof v === 'string') return v;
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

export function formatFields(fields: ProgressFields): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(' ');
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Writes nothing. */
class SilentProgress implements Progress {
  start(): void {}
  update(): void {}
  stop(): void {}
}

/** Plain lines like `[train] 12/100 (12%) reward=0.41 loss=1.23 | 30s, eta 3m40s`. */
export class LineProgress implements Progress {
  private total = 0;
  private done = 0;
  /** Units done before this start (a resumed stage): the rate and eta count only the ones after. */
  private base = 0;
  private fields: Record<string, number | string> = {};
  private started = 0;
  private lastWrite = Number.NEGATIVE_INFINITY;
  private written = -1;
  private readonly stream: ProgressStream;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly label: string,
    options: Omit<ProgressOptions, 'label' | 'mode'> = {},
  ) {
    this.stream = options.stream ?? process.stdout;
    this.intervalMs = options.intervalMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  start(total: number, fields: ProgressFields = {}, done = 0): void {
    this.total = total;
    this.done = done;
    this.base = done;
    this.fields = { ...fields };
    this.started = this.now();
    this.lastWrite = Number.NEGATIVE_INFINITY;
    this.written = -1;
  }

  update(done: number, fields: ProgressFields = {}): void {
    this.done = done;
    Object.assign(this.fields, fields);
    const t = this.now();
    if (t - this.lastWrite >= this.intervalMs || (done >= this.total && this.written !== done)) this.write(t);
  }

  stop(): void {
    if (this.written !== this.done) this.write(this.now());
  }

  private write(t: number): void {
    const elapsed = (t - this.started) / 1000;
    const pct = this.total > 0 ? Math.floor((100 * this.done) / this.total) : 100;
    const ran = this.done - this.base;
    const eta = ran > 0 ? (elapsed / ran) * Math.max(0, this.total - this.done) : Number.NaN;
    const f = formatFields(this.fields);
    const timing =
      this.done >= this.total
        ? formatDuration(elapsed)
        : `${formatDuration(elapsed)}, eta ${formatDuration(eta)}`;
    this.stream.write(
      `[${this.label}] ${this.done}/${this.total} (${pct}%)${f ? ` ${f}` : ''} | ${timing}\n`,
    );
    this.lastWrite = t;
    this.written = this.done;
  }
}

/** A live cli-progress bar. */
export class BarProgress implements Progress {
  private readonly bar: cliProgress.SingleBar;
  private fields: Record<string, number | string> = {};

  constructor(label: string, stream: ProgressStream = process.stdout) {
    this.bar = new cliProgress.SingleBar(
      {
        format: `${label.replace(/[{}]/g, '')} [{bar}] {value}/{total} {percentage}% | {fields} | {duration_formatted} eta {eta_formatted}`,
        stream: stream as NodeJS.WritableStream,
        hideCursor: true,
        barsize: 30,
        etaBuffer: 20,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  start(total: number, fields: ProgressFields = {}, done = 0): void {
    this.fields = { ...fields };
    this.bar.start(total, done, { fields: formatFields(this.fields) });
  }

  update(done: number, fields: ProgressFields = {}): void {
    Object.assign(this.fields, fields);
    this.bar.update(done, { fields: formatFields(this.fields) });
  }

  stop(): void {
    this.bar.stop();
  }
}

/** A progress display for one stage, chosen by `mode` and whether the stream is a TTY. */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stdout;
  const mode = options.mode ?? 'auto';
  if (mode === 'none') return new SilentProgress();
  if (mode === 'bar' || (mode === 'auto' && stream.isTTY === true))
    return new BarProgress(options.label, stream);
  return new LineProgress(options.label, { ...options, stream });
}
