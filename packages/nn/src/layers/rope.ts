/**
 * Rotary position embeddings (Su et al. 2021), rotate-half layout as in GPT-NeoX and LLaMA: the first and
 * second halves of each head's features form the (real, imaginary) pairs rotated by position · θ_i.
 */
import { type FloatDType, type Tensor, embedding, keep, rotaryEmbedding, tensor } from '@agent-r1/tensor';

/**
 * How a pretrained model stretches its rotary frequencies past the context it was trained on (Hugging Face's
 * `rope_scaling`): `linear` divides every frequency by `factor`; `llama3` (Llama 3.1) divides the low
 * frequencies (wavelengths over originalMaxLength / lowFreqFactor) by `factor`, keeps the high ones
 * (wavelengths under originalMaxLength / highFreqFactor) and interpolates smoothly between the two.
 */
export type RopeScaling =
  | { type: 'linear'; factor: number }
  | {
      type: 'llama3';
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxLength: number;
    };

/** θ_i = base^(-2i / headDim) for i < headDim / 2, scaled as `scaling` says. */
export function inverseFrequencies(
  headDim: number,
  base: number,
  scaling: RopeScaling | null = null,
): number[] {
  const inv = Array.from({ length: headDim / 2 }, (_, i) => base ** ((-2 * i) / headDim));
  if (scaling === null) return inv;
  if (scaling.type === 'linear') return inv.map((f) => f / scaling.factor);
  const { factor, lowFreqFactor, highFreqFactor, originalMaxLength } = scaling;
  const lowWavelength = originalMaxLength / lowFreqFactor;
  const highWavelength = originalMaxLength / highFreqFactor;
  return inv.map((f) => {
    const wavelength = (2 * Math.PI) / f;
    if (wavelength < highWavelength) return f;
    if (wavelength > lowWavelength) return f / factor;
    const smooth = (originalMaxLength / wavelength - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
    return ((1 - smooth) * f) / factor + smooth * f;
  });
}

export class RotaryTables {
  /**
   * [maxLength, headDim] each; buffers, not parameters. Each position's row is laid out for `applyRotary`:
   * `cos` is the half-dimension's cosines twice, `sin` its sines negated and then as they are, so that a
   * rotation is two products and a sum over the whole head (`x·cos + rotateHalf(x)·sin`).
   */
  readonly cos: Tensor;
  readonly sin: Tensor;

  constructor(
    readonly headDim: number,
    readonly maxLength: number,
    base = 10000,
    options: { dtype?: FloatDType; device?: string; scaling?: RopeScaling | null } = {},
  ) {
    if (headDim % 2 !== 0) throw new Error(`RotaryTables: head dimension must be even, got ${headDim}`);
    const half = headDim / 2;
    const inv = inverseFrequencies(headDim, base, options.scaling ?? null);
    const cos = new Float64Array(maxLength * headDim);
    const sin = new Float64Array(maxLength * headDim);
    for (let p = 0; p < maxLength; p++) {
      for (let i = 0; i < half; i++) {
        const angle = p * inv[i];
        const [c, s] = [Math.cos(angle), Math.sin(angle)];
        const row = p * headDim;
        cos[row + i] = c;
        cos[row + half + i] = c;
        sin[row + i] = -s;
        sin[row + half + i] = s;
      }
    }
    const opts = {
      dtype: options.dtype ?? 'float32',
      device: options.device,
      shape: [maxLength, headDim],
    } as const;
    this.cos = keep(tensor(cos, opts));
    this.sin = keep(tensor(sin, opts));
  }

  /** cos and sin rows for int32 positions [B, T], shaped [B, 1, T, headDim] to broadcast over heads. */
  at(positions: Tensor): { cos: Tensor; sin: Tensor } {
    const pick = (table: Tensor) => {
      const rows = embedding(table, positions);
      const out = rows.unsqueeze(1);
      rows.dispose();
      return out;
    };
    return { cos: pick(this.cos), sin: pick(this.sin) };
  }

  dispose(): void {
    this.cos.dispose();
    this.sin.dispose();
  }
}

/**
 * Rotates x [B, H, T, D] by the angles whose rows `RotaryTables.at` gives ([B, 1, T, D]): each pair
 * (x1, x2) of the two halves becomes (x1·cos − x2·sin, x2·cos + x1·sin), computed as
 * `x·cos + [x2, x1]·sin` with the sines' first half negated, in one kernel (`rotaryEmbedding`).
 */
export function applyRotary(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  return rotaryEmbedding(x, cos, sin);
}
