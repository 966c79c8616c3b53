/**
 * The kernel IR's index arithmetic (src/kernel-ir/walk.ts): merging axes keeps every operand's offsets,
 * and the rendered walk of a flat index gives each operand's offset, for any strides (broadcast 0,
 * negative, transposed) and offsets. The walk is run here as JavaScript over BigInt, whose `/` truncates
 * as the GPU targets' integer division does; the WGSL and CUDA renderings are run by the WebGPU and CUDA
 * emulator suites.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { elementOffsets } from '../src/backend/cpu/strided.js';
import { cIndexDialect } from '../src/kernel-ir/render-c.js';
import { WGSL_INDEX } from '../src/kernel-ir/render-wgsl.js';
import { type IndexDialect, mergeAxes, renderOffsetWalk } from '../src/kernel-ir/walk.js';

/** Several operands of one shape: any strides, including 0 (broadcast) and negative ones, any offsets. */
const operands = fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 5 }).chain((shape) =>
  fc.record({
    shape: fc.constant(shape),
    strides: fc.array(fc.tuple(...shape.map(() => fc.integer({ min: -40, max: 40 }))), {
      minLength: 1,
      maxLength: 3,
    }),
    offsets: fc.array(fc.nat({ max: 1000 }), { minLength: 3, maxLength: 3 }),
  }),
);

const JS_BIGINT: IndexDialect = {
  variable: (name, value) => `let ${name} = ${value};`,
  constant: (name, value) => `const ${name} = ${value};`,
  toOffset: (value) => value,
};

/** The rendered walk as a JavaScript function of the flat index, giving each operand's offset. */
function compiledWalk(shape: number[], strides: number[][], offsets: number[]): (i: number) => number[] {
  const names = strides.map((_, k) => `off${k}`);
  const walk = renderOffsetWalk(
    {
      rank: shape.length,
      index: 'BigInt(i)',
      extent: (d) => `${shape[d]}n`,
      offsets: names,
      stride: (k, d) => `${strides[k][d]}n`,
    },
    JS_BIGINT,
  );
  const body = [
    ...names.map((name, k) => `let ${name} = ${offsets[k]}n;`),
    ...walk,
    `return [${names.map((name) => `Number(${name})`).join(', ')}];`,
  ].join('\n');
  return new Function('i', body) as (i: number) => number[];
}

const offsetsOf = (shape: number[], strides: number[][], offsets: number[]) =>
  strides.map((s, k) => Array.from(elementOffsets(shape, s, offsets[k])));

describe('kernel IR: the index arithmetic of strided operands', () => {
  test('merging axes keeps every operand’s offsets, element by element', () => {
    fc.assert(
      fc.property(operands, ({ shape, strides, offsets }) => {
        const merged = mergeAxes(shape, strides);
        expect(offsetsOf(merged.shape, merged.strides, offsets)).toEqual(offsetsOf(shape, strides, offsets));
        expect(merged.shape).not.toContain(1);
      }),
    );
  });

  test('merging makes a dense walk one axis and keeps a broadcast axis apart', () => {
    expect(mergeAxes([2, 3, 4], [[12, 4, 1]])).toEqual({ shape: [24], strides: [[1]] });
    expect(mergeAxes([1, 1, 7], [[7, 7, 1]])).toEqual({ shape: [7], strides: [[1]] });
    expect(mergeAxes([], [[]])).toEqual({ shape: [], strides: [[]] });
    // Row broadcast: the first operand is dense, the second repeats one row of 4.
    expect(
      mergeAxes(
        [3, 4],
        [
          [4, 1],
          [0, 1],
        ],
      ),
    ).toEqual({
      shape: [3, 4],
      strides: [
        [4, 1],
        [0, 1],
      ],
    });
  });

  test('the rendered walk gives each operand’s offset of every flat index, merged or not', () => {
    fc.assert(
      fc.property(operands, ({ shape, strides, offsets }) => {
        const expected = offsetsOf(shape, strides, offsets);
        const merged = mergeAxes(shape, strides);
        for (const axes of [{ shape, strides }, merged]) {
          const walk = compiledWalk(axes.shape, axes.strides, offsets);
          const n = expected[0].length;
          const got = Array.from({ length: n }, (_, i) => walk(i));
          strides.forEach((_, k) => {
            expect(got.map((o) => o[k])).toEqual(expected[k]);
          });
        }
      }),
    );
  });

  test('the C and WGSL dialects declare the walk’s values in their syntax', () => {
    const walk = { rank: 2, index: 'i', extent: (d: number) => `E${d}`, offsets: ['o'], stride: () => 'S' };
    expect(renderOffsetWalk(walk, cIndexDialect('long long'))).toEqual([
      'long long rest = i;',
      '{ long long n = E1; long long c = rest % n; rest = rest / n; o += c * S; }',
      '{ long long c = rest; o += c * S; }',
    ]);
    expect(renderOffsetWalk(walk, WGSL_INDEX)).toEqual([
      'var rest = i;',
      '{ let n = E1; let c = i32(rest % n); rest = rest / n; o += c * S; }',
      '{ let c = i32(rest); o += c * S; }',
    ]);
  });
});
