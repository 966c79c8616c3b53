/**
 * The quickstart job: a two-layer MLP learns to tell three interleaved spirals apart, trained with AdamW on
 * the CPU backend. Same seed, same losses. Run: npm run example:spirals
 */
import { pathToFileURL } from 'node:url';
import { Generator, type Tensor, crossEntropy, noGrad, rand, tensor, tidy } from '@agent-r1/tensor';
import { AdamW, Linear, Module } from '../src/index.js';

class Mlp extends Module {
  readonly hidden: Linear;
  readonly out: Linear;

  constructor(hidden: number, classes: number, generator: Generator) {
    super();
    this.hidden = this.module('hidden', new Linear(2, hidden, { generator }));
    this.out = this.module('out', new Linear(hidden, classes, { generator }));
  }

  forward(x: Tensor): Tensor {
    return tidy(() => this.out.forward(this.hidden.forward(x).gelu()));
  }
}

/** Points on `classes` spiral arms with a little angular noise, drawn from a seeded generator. */
export function spirals(pointsPerClass: number, classes: number, seed: number): { x: Tensor; y: Tensor } {
  const n = pointsPerClass * classes;
  const noise = rand([n], { generator: new Generator(seed + 1) });
  const u = noise.dataSync();
  noise.dispose();
  const xs = new Float32Array(2 * n);
  const ys = new Int32Array(n);
  for (let c = 0; c < classes; c++) {
    for (let i = 0; i < pointsPerClass; i++) {
      const k = c * pointsPerClass + i;
      const r = i / pointsPerClass;
      const angle = (c * 2 * Math.PI) / classes + r * 4 + (u[k] - 0.5) * 0.3;
      xs[2 * k] = r * Math.cos(angle);
      xs[2 * k + 1] = r * Math.sin(angle);
      ys[k] = c;
    }
  }
  return { x: tensor(xs, { shape: [n, 2] }), y: tensor(ys) };
}

export interface TrainResult {
  losses: number[];
  /** Accuracy on a held-out draw of spiral points (other noise seed). */
  accuracy: number;
}

export function trainSpirals(
  options: { steps?: number; seed?: number; log?: (line: string) => void } = {},
): TrainResult {
  const steps = options.steps ?? 400;
  const seed = options.seed ?? 0;
  const { x, y } = spirals(100, 3, seed);
  const model = new Mlp(64, 3, new Generator(seed));
  const optimizer = new AdamW(model.parameters(), { lr: 0.02, weightDecay: 0 });
  const losses: number[] = [];
  for (let step = 1; step <= steps; step++) {
    const loss = tidy(() => {
      const l = crossEntropy(model.forward(x), y);
      l.backward();
      optimizer.step();
      optimizer.zeroGrad();
      return l.itemSync();
    });
    losses.push(loss);
    if (step % 50 === 0 || step === 1)
      options.log?.(`step ${String(step).padStart(4)}  loss ${loss.toFixed(4)}`);
  }
  const heldOut = spirals(100, 3, seed + 1000);
  const accuracy = noGrad(() =>
    tidy(() => model.forward(heldOut.x).argmax(-1).eq(heldOut.y).cast('float32').mean().itemSync()),
  );
  options.log?.(`held-out accuracy ${(accuracy * 100).toFixed(1)}% on ${heldOut.y.size} points`);
  for (const t of [x, y, heldOut.x, heldOut.y]) t.dispose();
  optimizer.dispose();
  model.dispose();
  return { losses, accuracy };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = performance.now();
  trainSpirals({ log: console.log });
  console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
