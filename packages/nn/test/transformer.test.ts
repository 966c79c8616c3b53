import { Generator, crossEntropy, memory, noGrad, randint, randn, tensor, tidy } from '@agent-r1/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdamW, TransformerLM, extend, generate } from '../src/index.js';

const tiny = { vocabSize: 23, dModel: 16, layers: 2, heads: 4, kvHeads: 2, maxLength: 32, seed: 7 };

/** The output layers a model can have: the LM head alone, or with a copy head and its options. */
const OUTPUT_LAYERS = [
  {
    name: 'LM head',
    copyHead: false,
    copyMatch: false,
    copyMatchSpan: false,
    copyMatchGate: false,
    copySourceGate: false,
  },
  {
    name: 'copy head',
    copyHead: true,
    copyMatch: false,
    copyMatchSpan: false,
    copyMatchGate: false,
    copySourceGate: false,
  },
  {
    name: 'copy head, match evidence, source gate',
    copyHead: true,
    copyMatch: true,
    copyMatchSpan: false,
    copyMatchGate: false,
    copySourceGate: true,
  },
  {
    name: 'copy head, gated match evidence with its span, source gate',
    copyHead: true,
    copyMatch: true,
    copyMatchSpan: true,
    copyMatchGate: true,
    copySourceGate: true,
  },
];

/** A float64 model with this output layer; a match gate gets random weights (it starts at zeros). */
function modelWith({ name: _, ...layer }: (typeof OUTPUT_LAYERS)[number]): TransformerLM {
  const model = new TransformerLM({ ...tiny, ...layer, dtype: 'float64' });
  const gate = model.copyHead?.matchGate;
  if (gate) noGrad(() => gate.copy_(randn(gate.shape, { dtype: 'float64', generator: new Generator(11) })));
  return model;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe('TransformerLM', () => {
  it('gives logits [B, T, V] and values [B, T] with a value head; counts parameters', () => {
    const model = new TransformerLM({ ...tiny, valueHead: true });
    const ids = tensor(
      [
        [1, 2, 3],
        [4, 5, 6],
      ],
      { dtype: 'int32' },
    );
    const { logits, values } = model.forward(ids);
    expect(logits.shape).toEqual([2, 3, 23]);
    expect(values!.shape).toEqual([2, 3]);
    // embed 23·16; per block: 2 norms·16 + q 16·16 + k,v 2·(16·8) + o 16·16 + swiglu 3·(16·48); final norm; value head 17
    expect(model.numParameters()).toBe(23 * 16 + 2 * (32 + 256 + 256 + 256 + 3 * 16 * 48) + 16 + 17);
    model.dispose();
  });

  it('is reproducible from its seed and differs across seeds', () => {
    const a = new TransformerLM(tiny).embed.weight.dataSync();
    const b = new TransformerLM(tiny).embed.weight.dataSync();
    const c = new TransformerLM({ ...tiny, seed: 8 }).embed.weight.dataSync();
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('is causal: changing a later token leaves earlier logits unchanged', () => {
    const model = new TransformerLM(tiny);
    const l1 = model.forward(tensor([[1, 2, 3, 4]], { dtype: 'int32' })).logits.dataSync();
    const l2 = model.forward(tensor([[1, 2, 3, 9]], { dtype: 'int32' })).logits.dataSync();
    expect(maxAbsDiff(l1.subarray(0, 3 * 23), l2.subarray(0, 3 * 23))).toBe(0);
    expect(maxAbsDiff(l1.subarray(3 * 23), l2.subarray(3 * 23))).toBeGreaterThan(0);
  });

  it.each(OUTPUT_LAYERS)(
    'logits at chosen positions equal the full pass at those positions, and so do their gradients (output: $name)',
    (layer) => {
      const model = modelWith(layer);
      const V = tiny.vocabSize;
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 9 }),
          fc.integer({ min: 0, max: 2 ** 31 }),
          (B, T, seed) => {
            const generator = new Generator(seed);
            const ids = randint(0, V, [B, T], { generator, dtype: 'int32' });
            const positions = Array.from({ length: B }, () =>
              Array.from({ length: T }, (_, t) => t).filter(() => generator.random() < 0.4),
            );
            const grads = (loss: () => ReturnType<typeof tensor>) => {
              model.zeroGrad();
              tidy(() => loss().backward());
              // A parameter no chosen output depends on has no gradient: zeros.
              return model
                .parameters()
                .map((p) => Array.from(p.grad?.dataSync() ?? p.dataSync().map(() => 0)));
            };
            // Weight each chosen (row, position) by a fixed number, so gradients must match position by position.
            const weightOf = (b: number, p: number) => 1 + ((b * 7 + p * 3) % 5);
            const full = model.forward(ids).logits;
            const chosen = model.forward(ids, { positions }).logits;
            const F = full.dataSync();
            const C = chosen.dataSync();
            const Q = chosen.shape[1];
            expect(chosen.shape).toEqual([B, Math.max(1, ...positions.map((p) => p.length)), V]);
            for (const [b, row] of positions.entries())
              row.forEach((p, q) => {
                const at = (b * Q + q) * V;
                expect(
                  maxAbsDiff(C.subarray(at, at + V), F.subarray((b * T + p) * V, (b * T + p + 1) * V)),
                ).toBeLessThan(1e-12);
              });
            const weights = (shape: number[], index: (b: number, i: number) => number | null) => {
              const data = new Float64Array(shape[0] * shape[1] * V);
              for (let b = 0; b < shape[0]; b++)
                for (let i = 0; i < shape[1]; i++) {
                  const p = index(b, i);
                  if (p !== null)
                    data.fill(weightOf(b, p), (b * shape[1] + i) * V, (b * shape[1] + i + 1) * V);
                }
              return tensor(data, { shape: [shape[0], shape[1], V], dtype: 'float64' });
            };
            const fullWeights = weights([B, T], (b, t) => (positions[b].includes(t) ? t : null));
            const chosenWeights = weights([B, Q], (b, q) => positions[b][q] ?? null);
            const g1 = grads(() => model.forward(ids).logits.mul(fullWeights).sum());
            const g2 = grads(() => model.forward(ids, { positions }).logits.mul(chosenWeights).sum());
            for (const [i, g] of g1.entries()) expect(maxAbsDiff(g, g2[i])).toBeLessThan(1e-9);
            for (const t of [ids, full, chosen, fullWeights, chosenWeights]) t.dispose();
          },
        ),
        { numRuns: 15 },
      );
      expect(() => model.forward(tensor([[1, 2]], { dtype: 'int32' }), { positions: [[2]] })).toThrow(
        /position 2 of row 0/,
      );
    },
  );

  it.each(OUTPUT_LAYERS)(
    "with a cache, logits at chosen new positions are the cached pass's at those positions, to the bit (output: $name)",
    (layer) => {
      const model = modelWith(layer);
      const prompt = tensor(
        [
          [3, 4, 5, 0],
          [6, 7, 8, 9],
        ],
        { dtype: 'int32' },
      );
      const chunk = tensor(
        [
          [5, 3, 1],
          [2, 0, 0],
        ],
        { dtype: 'int32' },
      );
      const [all, chosen] = [undefined, [[2, 0], [0]]].map((positions) => {
        const cache = model.createCache(2);
        model.forward(prompt, { cache, lengths: [3, 4] });
        const { logits } = model.forward(chunk, { cache, lengths: [3, 1], positions });
        expect(cache.lengths).toEqual([6, 5]);
        cache.dispose();
        return logits;
      });
      expect(chosen.shape).toEqual([2, 2, 23]);
      const V = 23;
      const full = all.dataSync();
      const at = chosen.dataSync();
      // Row 1's list is padded with its last position.
      for (const [b, q, t] of [
        [0, 0, 2],
        [0, 1, 0],
        [1, 0, 0],
        [1, 1, 0],
      ]) {
        const row = at.subarray((b * 2 + q) * V, (b * 2 + q + 1) * V);
        expect([...row]).toEqual([...full.subarray((b * 3 + t) * V, (b * 3 + t + 1) * V)]);
      }
    },
  );

  it('ignores right padding: a padded row gives the logits of the unpadded row', () => {
    const model = new TransformerLM(tiny);
    const alone = model.forward(tensor([[5, 6]], { dtype: 'int32' })).logits.dataSync();
    const padded = model
      .forward(
        tensor(
          [
            [5, 6, 0, 0],
            [1, 2, 3, 4],
          ],
          { dtype: 'int32' },
        ),
        { lengths: [2, 4] },
      )
      .logits.dataSync();
    expect(maxAbsDiff(alone, padded.subarray(0, 2 * 23))).toBeLessThan(1e-5);
  });

  it.each(OUTPUT_LAYERS)(
    'KV-cache decoding returns the logits of a full forward pass (random prompts, rows appending 0..3 tokens per step; output: $name)',
    (layer) => {
      const model = modelWith(layer);
      const tokens = (minLength: number, maxLength: number) =>
        fc.array(fc.integer({ min: 0, max: 22 }), { minLength, maxLength });
      fc.assert(
        fc.property(
          fc.array(fc.record({ prompt: tokens(1, 6), chunks: fc.array(tokens(0, 3), { maxLength: 4 }) }), {
            minLength: 1,
            maxLength: 4,
          }),
          (rows) => {
            const cache = model.createCache(rows.length);
            const last = extend(
              model,
              cache,
              rows.map((r) => r.prompt),
            );
            // Each step mixes rows that decode one token, rows that append several (an observation, which
            // takes extend's separate pass) and rows that add nothing.
            const steps = Math.max(...rows.map((r) => r.chunks.length));
            for (let step = 0; step < steps; step++) {
              const out = extend(
                model,
                cache,
                rows.map((r) => r.chunks[step] ?? []),
              );
              out.forEach((logits, b) => {
                if (logits) last[b] = logits;
              });
            }
            rows.forEach((r, b) => {
              const full = [r.prompt, ...r.chunks].flat();
              const ref = model.forward(tensor([full], { dtype: 'int32' })).logits.dataSync();
              const V = 23;
              expect(maxAbsDiff(last[b]!, ref.subarray((full.length - 1) * V))).toBeLessThan(1e-9);
              expect(cache.lengths[b]).toBe(full.length);
            });
            cache.dispose();
          },
        ),
        { numRuns: 20 },
      );
    },
  );

  it('KVCache.gather copies rows out and scatter writes them back', () => {
    const model = new TransformerLM({ ...tiny, copyHead: true, copySourceGate: true, dtype: 'float64' });
    const cache = model.createCache(3);
    extend(model, cache, [[1, 2], [3], [4, 5, 6]]);
    const sub = cache.gather([2, 0]);
    expect(sub.lengths).toEqual([3, 2]);
    expect(Array.from(sub.tokenIds![0].subarray(0, 3))).toEqual([4, 5, 6]);
    expect(maxAbsDiff(sub.keys[1].select(0, 1).dataSync(), cache.keys[1].select(0, 0).dataSync())).toBe(0);
    extend(model, sub, [[7], [8, 9]]);
    cache.scatter(sub, [2, 0]);
    expect(cache.lengths).toEqual([4, 1, 4]);
    expect(maxAbsDiff(cache.copyKeys!.select(0, 2).dataSync(), sub.copyKeys!.select(0, 0).dataSync())).toBe(
      0,
    );
    expect(
      maxAbsDiff(cache.copySources!.select(0, 2).dataSync(), sub.copySources!.select(0, 0).dataSync()),
    ).toBe(0);
    expect(() => cache.gather([3])).toThrow(/row 3/);
    expect(() => cache.scatter(sub, [0])).toThrow(/1 rows for a cache of 2/);
    sub.dispose();
    cache.dispose();
  });

  it('rows of a cache advance independently (an observation appended to one row only)', () => {
    const model = new TransformerLM({ ...tiny, dtype: 'float64' });
    const cache = model.createCache(2);
    extend(model, cache, [[1, 2], [3]]);
    const last = extend(model, cache, [[4, 5, 6], []]);
    expect(last[1]).toBeNull();
    const ref = model.forward(tensor([[1, 2, 4, 5, 6]], { dtype: 'int32' })).logits.dataSync();
    expect(maxAbsDiff(last[0]!, ref.subarray(4 * 23))).toBeLessThan(1e-9);
    expect(cache.lengths).toEqual([5, 1]);
  });

  it('overfits a short text to near-zero loss', () => {
    const text = 'the agent searches, reads, and answers. '.repeat(2);
    const ids = Array.from(text, (ch) => ch.charCodeAt(0) % 23);
    const model = new TransformerLM({ ...tiny, dModel: 32, heads: 4, kvHeads: 4, maxLength: 128 });
    const opt = new AdamW(model.parameters(), { lr: 0.01, weightDecay: 0 });
    const x = tensor([ids.slice(0, -1)], { dtype: 'int32' });
    const y = tensor([ids.slice(1)], { dtype: 'int32' });
    let loss = Number.POSITIVE_INFINITY;
    let before = memory();
    for (let step = 0; step < 150 && loss > 0.05; step++) {
      loss = tidy(() => {
        const l = crossEntropy(model.forward(x).logits, y);
        l.backward();
        opt.step();
        opt.zeroGrad();
        return l.itemSync();
      });
      if (step === 0) before = memory();
    }
    expect(loss).toBeLessThan(0.05);
    expect(memory()).toEqual(before);
  });

  it('in bfloat16: the float32 initial weights rounded, logits near float32 ones, and it trains', () => {
    const ids = tensor([[1, 5, 2, 9, 3, 7, 1, 5, 2, 9, 3, 7]], { dtype: 'int32' });
    const wide = new TransformerLM({ ...tiny, copyHead: true });
    const half = new TransformerLM({ ...tiny, copyHead: true, dtype: 'bfloat16' });
    const named = new Map(half.namedParameters());
    for (const [name, p] of wide.namedParameters()) {
      const h = named.get(name)!;
      expect(h.dtype, name).toBe('bfloat16');
      expect([...h.dataSync()], name).toEqual([...p.cast('bfloat16').dataSync()]);
    }
    const w = noGrad(() => wide.forward(ids).logits.dataSync());
    const logits = noGrad(() => half.forward(ids).logits);
    expect(logits.dtype).toBe('bfloat16');
    expect(maxAbsDiff(logits.dataSync(), w)).toBeLessThan(0.05);
    const opt = new AdamW(half.parameters(), { lr: 0.01, weightDecay: 0 });
    const x = ids.slice(1, 0, -1);
    const y = ids.slice(1, 1);
    const losses: number[] = [];
    for (let step = 0; step < 40; step++)
      losses.push(
        tidy(() => {
          const l = crossEntropy(half.forward(x).logits, y);
          l.backward();
          expect(half.embed.weight.grad?.dtype).toBe('bfloat16');
          opt.step();
          opt.zeroGrad();
          return l.itemSync();
        }),
      );
    expect(losses.at(-1)).toBeLessThan(0.25 * losses[0]);
  });
});

describe('generate', () => {
  const model = new TransformerLM(tiny);

  it('is reproducible from a seed, stops per row on its stop token, returns log-probs', () => {
    const run = () =>
      generate(model, [[1, 2], [3]], { maxNewTokens: 8, generator: new Generator(5), temperature: 1.5 });
    const a = run();
    const b = run();
    expect(a.tokens).toEqual(b.tokens);
    expect(a.logprobs).toEqual(b.logprobs);
    expect(a.tokens.every((t) => t.length === 8)).toBe(true);
    expect(a.logprobs.flat().every((l) => l < 0 && Number.isFinite(l))).toBe(true);
    const stop = a.tokens[0][2];
    const c = generate(model, [[1, 2], [3]], {
      maxNewTokens: 8,
      generator: new Generator(5),
      temperature: 1.5,
      stopTokens: [[stop], []],
    });
    expect(c.tokens[0]).toEqual(a.tokens[0].slice(0, a.tokens[0].indexOf(stop) + 1));
    expect(c.finishReasons).toEqual(['stop_token', 'length']);
    expect(c.tokens[1]).toEqual(a.tokens[1]);
    for (const r of [a, b, c]) r.cache.dispose();
  });

  it('greedy decoding with the cache equals arg-max of full forward passes', () => {
    const { tokens, cache } = generate(model, [[4, 5, 6]], { maxNewTokens: 5, greedy: true });
    const seq = [4, 5, 6];
    for (let i = 0; i < 5; i++) {
      const logits = tidy(() =>
        model
          .forward(tensor([seq], { dtype: 'int32' }))
          .logits.select(1, seq.length - 1)
          .argmax(-1)
          .dataSync(),
      );
      seq.push(logits[0]);
    }
    expect(tokens[0]).toEqual(seq.slice(3));
    expect(cache.lengths).toEqual([8]);
    cache.dispose();
  });

  it('stop strings end a row when the decoded text contains them', () => {
    const decode = (ids: readonly number[]) => ids.map((i) => String.fromCharCode(97 + i)).join('');
    const a = generate(model, [[1]], { maxNewTokens: 6, generator: new Generator(1), temperature: 2 });
    const target = decode(a.tokens[0].slice(1, 3));
    const b = generate(model, [[1]], {
      maxNewTokens: 6,
      generator: new Generator(1),
      temperature: 2,
      stopStrings: [target],
      decode,
    });
    expect(decode(b.tokens[0]).endsWith(target)).toBe(true);
    expect(b.finishReasons[0]).toBe('stop_string');
    for (const r of [a, b]) r.cache.dispose();
  });

  it('stops at a NaN in the model, naming the prompt, rather than returning a NaN log-prob', () => {
    const broken = new TransformerLM({ ...tiny, seed: 1 });
    const [weight] = broken.parameters();
    noGrad(() => weight.copy_(weight.mul(Number.NaN)));
    for (const options of [{ greedy: true }, { temperature: 1, generator: new Generator(2) }])
      expect(() => generate(broken, [[1, 2]], { maxNewTokens: 3, ...options })).toThrow(
        /logits for prompt 0 after 0 new tokens are not finite; the sampled token's log-prob is NaN/,
      );
    broken.dispose();
  });

  it('samples with top-k = 1 the arg-max token', () => {
    const ids = randint(0, 23, [1, 4], { generator: new Generator(3) });
    const prompt = Array.from(ids.dataSync());
    const greedy = generate(model, [prompt], { maxNewTokens: 4, greedy: true });
    const topk = generate(model, [prompt], { maxNewTokens: 4, topK: 1, generator: new Generator(9) });
    expect(topk.tokens).toEqual(greedy.tokens);
    for (const r of [greedy, topk]) r.cache.dispose();
  });
});
