import { memory, tensor } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { readScalars } from '../src/trainer/read-scalars.js';

describe('readScalars', () => {
  it("gives each scalar's own number (a synchronous read's), skips absent entries and frees the tensors", async () => {
    const before = memory().tensors;
    const third = tensor([1 / 3], { dtype: 'float32' });
    const exact = third.itemSync();
    const read = await readScalars({
      a: third,
      b: tensor(1 / 7, { dtype: 'float64' }),
      c: undefined,
      d: tensor([[2]], { dtype: 'int32' }),
    });
    expect(read).toEqual({ a: exact, b: 1 / 7, d: 2 });
    expect(memory().tensors).toBe(before);
  });

  it('refuses a tensor that is not a scalar, naming it, and still frees them all', async () => {
    const before = memory().tensors;
    await expect(readScalars({ loss: tensor([1, 2]), ok: tensor(3) })).rejects.toThrow(
      /readScalars: loss has shape \[2\], not a scalar/,
    );
    expect(memory().tensors).toBe(before);
  });

  it('reads nothing from an empty set', async () => {
    expect(await readScalars({})).toEqual({});
  });
});
