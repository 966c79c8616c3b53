import { describe, expect, it } from 'vitest';
import { createProgress, formatFields, formatValue, LineProgress } from '../src/trainer/progress.js';
import { Capture } from './support/capture.js';

describe('progress', () => {
  it('formats live fields compactly', () => {
    expect(formatFields({ reward: 0.123456, em: 0.5, loss: 12.3456, step: 3, n: Number.NaN, t: 'x' })).toBe(
      'reward=0.1235 em=0.5 loss=12.35 step=3 n=nan t=x',
    );
    expect(formatValue(3e-5)).toBe('3.00e-5');
    expect(formatValue(-Infinity)).toBe('-inf');
  });

  it('writes periodic plain lines when the stream is not a TTY', () => {
    const out = new Capture();
    let t = 0;
    const p = createProgress({ label: 'train', stream: out, intervalMs: 1000, now: () => t });
    expect(p).toBeInstanceOf(LineProgress);
    p.start(10, { reward: 0 });
    for (let i = 1; i <= 10; i++) {
      t += 400;
      p.update(i, { reward: i / 10, loss: 1 / i });
    }
    p.stop();
    const lines = out.text.trim().split('\n');
    // Writes at t=400 (first), 1600, 2800, 4000 (the last, which stop() does not repeat).
    expect(lines).toEqual([
      '[train] 1/10 (10%) reward=0.1 loss=1 | 0s, eta 4s',
      '[train] 4/10 (40%) reward=0.4 loss=0.25 | 2s, eta 2s',
      '[train] 7/10 (70%) reward=0.7 loss=0.1429 | 3s, eta 1s',
      '[train] 10/10 (100%) reward=1 loss=0.1 | 4s',
    ]);
  });

  it('writes the final state on stop when it was not written yet', () => {
    const out = new Capture();
    let t = 0;
    const p = createProgress({ label: 'eval', mode: 'lines', stream: out, intervalMs: 10_000, now: () => t });
    p.start(100);
    p.update(1, { em: 0 });
    t = 5000;
    p.update(50, { em: 0.5 });
    p.stop();
    expect(out.text.trim().split('\n')).toEqual([
      '[eval] 1/100 (1%) em=0 | 0s, eta 0s',
      '[eval] 50/100 (50%) em=0.5 | 5s, eta 5s',
    ]);
  });

  it('counts the rate of a resumed stage from where it resumed', () => {
    const out = new Capture();
    let t = 0;
    const p = createProgress({ label: 'sft', mode: 'lines', stream: out, intervalMs: 0, now: () => t });
    p.start(100, {}, 60);
    t = 10_000;
    p.update(70);
    expect(out.text.trim()).toBe('[sft] 70/100 (70%) | 10s, eta 30s');
  });

  it("is silent in mode 'none' and draws a bar on a TTY", () => {
    const silent = new Capture();
    const none = createProgress({ label: 'x', mode: 'none', stream: silent });
    none.start(2);
    none.update(2);
    none.stop();
    expect(silent.text).toBe('');
    const tty = Object.assign(new Capture(), {
      isTTY: true,
      cursorTo() {},
      clearLine() {},
      moveCursor() {},
      columns: 120,
    });
    const bar = createProgress({ label: 'train', stream: tty });
    bar.start(4, { reward: 0.25 });
    bar.update(4, { reward: 0.75 });
    bar.stop();
    expect(tty.text).toContain('train [');
    expect(tty.text).toContain('4/4');
    expect(tty.text).toContain('reward=0.75');
  });
});
