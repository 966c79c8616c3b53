/**
 * A small SVG line-plot writer for training curves: axes with "nice" ticks, labels, a legend and one
 * polyline per series. Non-finite points (NaN, ±∞) are skipped. Files are written atomically.
 */
import { writeFileAtomicSync } from '@agent-r1/nn';
import type { MetricsRecord } from './metrics-log.js';

export interface PlotSeries {
  name: string;
  /** [x, y] points; x is usually the step. */
  points: readonly (readonly [number, number])[];
  /** A CSS colour; default from a fixed palette. */
  color?: string;
}

export interface PlotOptions {
  title?: string;
  xLabel?: string;
  yLabel?: string;
  width?: number;
  height?: number;
}

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

function esc(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** Round to 2 decimals for compact coordinates. */
function r2(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** "Nice" tick values (1, 2 or 5 × 10^k apart) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const ticks: number[] = [];
  const first = Math.ceil(lo / step - 1e-9);
  const last = Math.floor(hi / step + 1e-9);
  // k·step rounded to 12 significant digits, so 3 × 0.2 reads 0.6.
  for (let k = first; k <= last; k++) ticks.push(k === 0 ? 0 : Number((k * step).toPrecision(12)));
  return ticks;
}

function fmtTick(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1).replace('e+', 'e');
  return String(Number(v.toPrecision(6)));
}

/** The extent of the finite values, padded when empty or flat. */
function extent(values: number[]): [number, number] {
  if (values.length === 0) return [0, 1];
  let lo = values[0];
  let hi = values[0];
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  return [lo, hi];
}

/** The SVG text of a line plot of `series`. */
export function renderSvgPlot(series: readonly PlotSeries[], options: PlotOptions = {}): string {
  const width = options.width ?? 720;
  const height = options.height ?? 420;
  const left = 70;
  const right = 170;
  const top = options.title ? 40 : 20;
  const bottom = 50;
  const plotW = Math.max(10, width - left - right);
  const plotH = Math.max(10, height - top - bottom);

  const finite = series.map((s) => s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)));
  const xs = finite.flatMap((pts) => pts.map((p) => p[0]));
  const ys = finite.flatMap((pts) => pts.map((p) => p[1]));
  const [x0, x1] = extent(xs);
  const [y0, y1] = extent(ys);
  const xTicks = niceTicks(x0, x1, 6);
  const yTicks = niceTicks(y0, y1, 5);
  const sx = (x: number) => left + ((x - x0) / (x1 - x0)) * plotW;
  const sy = (y: number) => top + plotH - ((y - y0) / (y1 - y0)) * plotH;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="white"/>`);
  if (options.title)
    out.push(
      `<text x="${r2(left + plotW / 2)}" y="24" text-anchor="middle" font-size="15">${esc(options.title)}</text>`,
    );

  // Grid and ticks.
  out.push('<g class="grid" stroke="#e5e5e5" stroke-width="1">');
  for (const t of yTicks)
    out.push(`<line x1="${left}" y1="${r2(sy(t))}" x2="${left + plotW}" y2="${r2(sy(t))}"/>`);
  for (const t of xTicks)
    out.push(`<line x1="${r2(sx(t))}" y1="${top}" x2="${r2(sx(t))}" y2="${top + plotH}"/>`);
  out.push('</g>');
  out.push('<g class="ticks" fill="#333">');
  for (const t of yTicks)
    out.push(`<text x="${left - 6}" y="${r2(sy(t) + 4)}" text-anchor="end">${esc(fmtTick(t))}</text>`);
  for (const t of xTicks)
    out.push(`<text x="${r2(sx(t))}" y="${top + plotH + 18}" text-anchor="middle">${esc(fmtTick(t))}</text>`);
  out.push('</g>');

  // Axes and labels.
  out.push(
    `<g class="axes" stroke="#333" stroke-width="1"><line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}"/><line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}"/></g>`,
  );
  out.push(
    `<text x="${r2(left + plotW / 2)}" y="${height - 12}" text-anchor="middle">${esc(options.xLabel ?? 'step')}</text>`,
  );
  if (options.yLabel) {
    const cy = r2(top + plotH / 2);
    out.push(
      `<text x="16" y="${cy}" text-anchor="middle" transform="rotate(-90 16 ${cy})">${esc(options.yLabel)}</text>`,
    );
  }

  // Series.
  series.forEach((s, i) => {
    const color = esc(s.color ?? PALETTE[i % PALETTE.length]);
    const pts = finite[i].map(([x, y]) => `${r2(sx(x))},${r2(sy(y))}`).join(' ');
    out.push(
      `<polyline data-series="${esc(s.name)}" fill="none" stroke="${color}" stroke-width="1.5" stroke-linejoin="round" points="${pts}"/>`,
    );
    if (finite[i].length === 1) {
      const [x, y] = finite[i][0];
      out.push(`<circle cx="${r2(sx(x))}" cy="${r2(sy(y))}" r="2.5" fill="${color}"/>`);
    }
  });

  // Legend.
  const lx = left + plotW + 16;
  out.push('<g class="legend">');
  series.forEach((s, i) => {
    const color = esc(s.color ?? PALETTE[i % PALETTE.length]);
    const ly = top + 10 + i * 18;
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 18}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${lx + 24}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  out.push('</g>');
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Renders and atomically writes an SVG line plot. */
export function writeSvgPlot(path: string, series: readonly PlotSeries[], options?: PlotOptions): void {
  writeFileAtomicSync(path, renderSvgPlot(series, options));
}

/** Plots metrics `keys` of `records` against the step into `path`. */
export function plotMetrics(
  path: string,
  records: readonly MetricsRecord[],
  keys: readonly string[],
  options?: PlotOptions,
): void {
  const series = keys.map((key) => ({
    name: key,
    points: records.filter((r) => key in r).map((r) => [r.step, r[key]] as const),
  }));
  writeSvgPlot(path, series, options);
}
