import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MetricsLog, metricSeries, openMetricsLog, readMetrics } from '../src/trainer/metrics-log.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-metrics-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function clock(start = 1_000_000, tick = 1500): () => number {
  let t = start - tick;
  return () => {
    t += tick;
    return t;
  };
}

describe('metrics.jsonl', () => {
  it('creates the directory and round-trips records, one line per step, written at once', () => {
    const dir = join(root, 'a', 'b');
    const log = openMetricsLog(dir, { now: clock() });
    expect(log.path).toBe(join(dir, 'metrics.jsonl'));
    const r0 = log.append(0, { reward: 0.25, loss: 1.5 });
    // Each line is on disk before the next append.
    expect(readFileSync(log.path, 'utf8')).toBe(`${JSON.stringify(r0)}\n`);
    log.append(1, { reward: 0.5, loss: Number.NaN, em: 1 });
    log.append(2, { reward: Number.POSITIVE_INFINITY });
    log.close();
    const back = readMetrics(log.path);
    expect(back).toHaveLength(3);
    expect(back[0]).toEqual({ step: 0, time: 1_000_000 + 1500, elapsed: 1.5, reward: 0.25, loss: 1.5 });
    expect(back[1].step).toBe(1);
    expect(back[1].loss).toBeNaN();
    expect(back[1].em).toBe(1);
    expect(back[2].reward).toBeNaN(); // non-finite values are stored as null
    expect(metricSeries(back, 'em')).toEqual([{ step: 1, value: 1 }]);
    expect(readFileSync(log.path, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('appends to an existing file, and drops records past a resumed step', () => {
    const dir = join(root, 'resume');
    const first = new MetricsLog(dir);
    for (let s = 0; s < 5; s++) first.append(s, { x: s });
    first.close();
    const again = new MetricsLog(dir);
    again.append(5, { x: 5 });
    again.close();
    expect(readMetrics(again.path).map((r) => r.step)).toEqual([0, 1, 2, 3, 4, 5]);
    const resumed = new MetricsLog(dir, { fromStep: 3 });
    resumed.append(3, { x: 30 });
    resumed.close();
    expect(readMetrics(resumed.path).map((r) => [r.step, r.x])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 30],
    ]);
  });

  it('skips a cut-off last line but rejects a malformed line in the middle', () => {
    const dir = join(root, 'torn');
    const log = new MetricsLog(dir);
    log.append(0, { a: 1 });
    log.append(1, { a: 2 });
    log.close();
    appendFileSync(log.path, '{"step": 2, "a"');
    expect(readMetrics(log.path).map((r) => r.step)).toEqual([0, 1]);
    appendFileSync(log.path, '\n{"step": 3}\n');
    expect(() => readMetrics(log.path)).toThrow(`${log.path}:3`);
  });

  it('rejects reserved names, non-numbers, and appends after close', () => {
    const log = new MetricsLog(join(root, 'bad'), { fileName: 'm.jsonl' });
    expect(existsSync(join(root, 'bad', 'm.jsonl'))).toBe(true);
    expect(() => log.append(0, { step: 1 })).toThrow('"step" is reserved');
    expect(() => log.append(0, { a: 'x' as unknown as number })).toThrow('metric "a" must be a number');
    expect(() => log.append(0.5)).toThrow('step must be an integer');
    log.close();
    expect(() => log.append(1)).toThrow('is closed');
  });
});
