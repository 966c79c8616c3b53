import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MetricsLog, readMetrics } from '../src/trainer/metrics-log.js';
import { niceTicks, plotMetrics, renderSvgPlot, writeSvgPlot } from '../src/trainer/plot.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-plot-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A minimal XML well-formedness check: every tag closes, in order; returns the elements' names and attributes. */
function parseSvg(text: string): { name: string; attrs: Record<string, string> }[] {
  const stack: string[] = [];
  const elements: { name: string; attrs: Record<string, string> }[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const between = text.slice(last, m.index);
    expect(between).not.toMatch(/[<>]/);
    expect(between.replace(/&(amp|lt|gt|quot|apos);/g, '')).not.toContain('&');
    last = tag.lastIndex;
    const [, close, name, attrText, selfClose] = m;
    if (close) {
      expect(stack.pop()).toBe(name);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText.matchAll(/([\w:-]+)="([^"]*)"/g)) attrs[a[1]] = a[2];
    elements.push({ name, attrs });
    if (!selfClose) stack.push(name);
  }
  expect(text.slice(last).trim()).toBe('');
  expect(stack).toEqual([]);
  return elements;
}

function checkPolylines(text: string, expected: number) {
  const elements = parseSvg(text);
  expect(elements[0].name).toBe('svg');
  const [vx, vy, vw, vh] = elements[0].attrs.viewBox.split(' ').map(Number);
  const polylines = elements.filter((e) => e.name === 'polyline');
  expect(polylines).toHaveLength(expected);
  for (const p of polylines) {
    const pts = p.attrs.points.trim() === '' ? [] : p.attrs.points.trim().split(/\s+/);
    for (const pt of pts) {
      const [x, y] = pt.split(',').map(Number);
      expect(Number.isFinite(x) && Number.isFinite(y)).toBe(true);
      expect(x).toBeGreaterThanOrEqual(vx);
      expect(x).toBeLessThanOrEqual(vx + vw);
      expect(y).toBeGreaterThanOrEqual(vy);
      expect(y).toBeLessThanOrEqual(vy + vh);
    }
  }
  return { elements, polylines };
}

describe('SVG plot', () => {
  it('draws one polyline per series with axes, ticks, labels and a legend, inside the viewBox', () => {
    const steps = Array.from({ length: 50 }, (_, i) => i);
    const svg = renderSvgPlot(
      [
        { name: 'reward', points: steps.map((s) => [s, Math.sin(s / 5)] as const) },
        { name: 'loss <pg & kl>', points: steps.map((s) => [s, 3 / (s + 1)] as const) },
        { name: 'em', points: steps.map((s) => [s, s / 50] as const) },
      ],
      { title: 'run "a"', yLabel: 'value' },
    );
    const { elements, polylines } = checkPolylines(svg, 3);
    expect(polylines.map((p) => p.attrs['data-series'])).toEqual([
      'reward',
      'loss &lt;pg &amp; kl&gt;',
      'em',
    ]);
    expect(polylines[0].attrs.points.split(' ')).toHaveLength(50);
    expect(svg).toContain('>run &quot;a&quot;</text>');
    expect(svg).toContain('>step</text>');
    expect(svg).toContain('>value</text>');
    expect(elements.filter((e) => e.name === 'line').length).toBeGreaterThan(6); // grid, axes, legend
    expect(svg).toContain('>loss &lt;pg &amp; kl&gt;</text>'); // legend entry
    // Distinct colours.
    expect(new Set(polylines.map((p) => p.attrs.stroke)).size).toBe(3);
  });

  it('skips non-finite points and survives empty, single-point and flat series', () => {
    const svg = renderSvgPlot([
      {
        name: 'gappy',
        points: [
          [0, 1],
          [1, Number.NaN],
          [2, 3],
          [3, Number.POSITIVE_INFINITY],
          [4, 2],
        ],
      },
      { name: 'empty', points: [] },
      { name: 'all-nan', points: [[0, Number.NaN]] },
      { name: 'one', points: [[2, 2]] },
    ]);
    const { polylines } = checkPolylines(svg, 4);
    expect(polylines[0].attrs.points.split(' ')).toHaveLength(3);
    expect(polylines[1].attrs.points).toBe('');
    expect(svg).not.toMatch(/NaN|Infinity/);
    checkPolylines(
      renderSvgPlot([
        {
          name: 'flat',
          points: [
            [0, 5],
            [10, 5],
          ],
        },
      ]),
      1,
    );
    checkPolylines(renderSvgPlot([]), 0);
  });

  it('picks nice ticks', () => {
    expect(niceTicks(0, 100, 5)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0.13, 0.91, 4)).toEqual([0.2, 0.4, 0.6, 0.8]);
    expect(niceTicks(-1, 1, 4)).toEqual([-1, -0.5, 0, 0.5, 1]);
  });

  it('writes atomically (no temporary files left) from a metrics file', () => {
    const log = new MetricsLog(root);
    for (let s = 0; s < 10; s++)
      log.append(s, { reward: s / 10, loss: 1 / (s + 1), ...(s % 2 ? { em: s } : {}) });
    log.close();
    const path = join(root, 'plots', 'curves.svg');
    plotMetrics(path, readMetrics(log.path), ['reward', 'loss', 'em'], { title: 'curves' });
    const svg = readFileSync(path, 'utf8');
    const { polylines } = checkPolylines(svg, 3);
    expect(polylines[2].attrs.points.split(' ')).toHaveLength(5);
    writeSvgPlot(path, [
      {
        name: 'x',
        points: [
          [0, 0],
          [1, 1],
        ],
      },
    ]);
    checkPolylines(readFileSync(path, 'utf8'), 1);
    expect(readdirSync(join(root, 'plots'))).toEqual(['curves.svg']);
  });
});
