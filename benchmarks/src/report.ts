/** Results: the aligned table printed to the terminal, and the JSON file with the machine it ran on. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import type { Benchmark, Library, Measurement } from './harness.js';

export interface Row {
  name: string;
  shape: string;
  library: Library;
  medianMs: number;
  minMs: number;
  reps: number;
  /** Work per call divided by the median time, in `unit`. */
  rate: number;
  unit: Benchmark['work']['unit'];
  /** Median time of ours divided by tfjs's in the same run (< 1: ours is faster); on the ours row. */
  ratio: number | null;
  /** Max abs difference between the two libraries' outputs, and whether it is within tolerance. */
  maxAbsDiff: number | null;
  agrees: boolean | null;
}

export interface MachineInfo {
  cpu: string;
  cores: number;
  node: string;
  os: string;
  date: string;
  tfjs: string;
  /** 1-minute load average when the run started: other work on the machine skews the timings. */
  loadAverage: number;
}

export function machineInfo(tfjsVersion: string): MachineInfo {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    node: process.version,
    os: `${os.platform()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    tfjs: tfjsVersion,
    loadAverage: os.loadavg()[0],
  };
}

export const machineLine = (m: MachineInfo) =>
  `Machine: ${m.cpu}, ${m.cores} cores, Node ${m.node}, ${m.os}; tfjs-core ${m.tfjs}; load ${m.loadAverage.toFixed(2)}; ${m.date}`;

export function toRow(bench: Benchmark, library: Library, m: Measurement): Row {
  const scale = 1e9 * (m.medianMs / 1e3);
  return {
    name: bench.name,
    shape: bench.shape,
    library,
    medianMs: m.medianMs,
    minMs: m.minMs,
    reps: m.reps,
    rate: bench.work.amount / scale,
    unit: bench.work.unit,
    ratio: null,
    maxAbsDiff: null,
    agrees: null,
  };
}

const rate = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toPrecision(3));
const ms = (x: number) => (x >= 100 ? x.toFixed(1) : x >= 10 ? x.toFixed(2) : x.toFixed(3));

export function formatTable(rows: Row[]): string {
  const header = ['benchmark', 'shape', 'library', 'median ms', 'min ms', 'reps', 'rate', 'ours/tfjs'];
  const cells = rows.map((r) => [
    r.name,
    r.shape,
    r.library,
    ms(r.medianMs),
    ms(r.minMs),
    String(r.reps),
    `${rate(r.rate)} ${r.unit}`,
    r.ratio === null ? '' : `${r.ratio.toFixed(2)}x${r.agrees === false ? ' (MISMATCH)' : ''}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const leftAligned = 3;
  const line = (c: string[]) =>
    c
      .map((s, i) => (i < leftAligned ? s.padEnd(widths[i]) : s.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function writeJson(
  file: string,
  machine: MachineInfo,
  config: Record<string, unknown>,
  rows: Row[],
  totalSeconds: number,
): void {
  mkdirSync(dirname(file), { recursive: true });
  const body = { machine, config, totalSeconds, results: rows };
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`);
}
