/**
 * One counter-based generator for every backend: Threefry-2x32 with 20 rounds (Salmon et al. 2011, the
 * generator JAX uses). Element i of a draw is a pure function of (key, counter + i), so a GPU kernel computes
 * the same numbers as this file, in any order, with no shared state.
 */
const ROTATIONS = [13, 15, 26, 6, 17, 29, 16, 24];

export function threefry2x32(k0: number, k1: number, c0: number, c1: number): [number, number] {
  const ks = [k0 >>> 0, k1 >>> 0, (0x1bd11bda ^ k0 ^ k1) >>> 0];
  let x0 = (c0 + ks[0]) >>> 0;
  let x1 = (c1 + ks[1]) >>> 0;
  for (let group = 0; group < 5; group++) {
    for (let j = 0; j < 4; j++) {
      const r = ROTATIONS[(group % 2) * 4 + j];
      x0 = (x0 + x1) >>> 0;
      x1 = ((x1 << r) | (x1 >>> (32 - r))) >>> 0;
      x1 = (x1 ^ x0) >>> 0;
    }
    x0 = (x0 + ks[(group + 1) % 3]) >>> 0;
    x1 = (x1 + ks[(group + 2) % 3] + group + 1) >>> 0;
  }
  return [x0, x1];
}

const TWO_POW_32 = 2 ** 32;

/** The two 32-bit words of a counter that may exceed 2^32. */
export function splitCounter(counter: number): [number, number] {
  return [(counter % TWO_POW_32) >>> 0, Math.floor(counter / TWO_POW_32) >>> 0];
}

/**
 * Maps a 32-bit word to (0, 1) with 23 bits: (2k + 1) / 2^24 has 24 significant bits, so it is exactly
 * representable in float32 and never rounds to 1 (with 24 bits + 0.5 the top value rounded to 1.0).
 */
export function wordToUnit(word: number): number {
  return ((word >>> 9) + 0.5) / 8388608;
}

/**
 * A seeded source of random numbers. Each draw of n numbers consumes n counters, so the same sequence of
 * calls from the same seed gives the same numbers, whatever the backend.
 */
export class Generator {
  readonly key: readonly [number, number];
  private counter = 0;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed) || seed < 0)
      throw new Error(`Generator: seed must be a non-negative integer, got ${seed}`);
    this.key = splitCounter(seed);
  }

  /** Reserves n counters and returns the first. */
  take(n: number): number {
    const first = this.counter;
    this.counter += n;
    return first;
  }

  /**
   * One number uniform on [0, 1), drawn on the host from the next counter (53 bits from the block's two
   * words): for data generation and shuffling outside tensors, from the same generator as tensor draws.
   */
  random(): number {
    const [w0, w1] = threefry2x32(this.key[0], this.key[1], ...splitCounter(this.take(1)));
    return (w0 * 2 ** 21 + (w1 >>> 11)) / 2 ** 53;
  }

  /** The generator's position, for checkpoints. */
  get state(): { key: readonly [number, number]; counter: number } {
    return { key: this.key, counter: this.counter };
  }

  set position(counter: number) {
    this.counter = counter;
  }
}

let defaultGenerator = new Generator(0);

export function manualSeed(seed: number): Generator {
  defaultGenerator = new Generator(seed);
  return defaultGenerator;
}

export function getDefaultGenerator(): Generator {
  return defaultGenerator;
}
