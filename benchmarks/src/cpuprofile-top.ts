/**
 * The functions with the most self time in a V8 CPU profile (`node --cpu-prof`):
 * `npx tsx benchmarks/src/cpuprofile-top.ts FILE.cpuprofile [count]`. Prints percent of the sampled time,
 * function, file and line; wasm functions show as wasm-function[index].
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, count = '30'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const { functionName, url, lineNumber } = (byId.get(id) as Node).callFrame;
  const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(key, (self.get(key) ?? 0) + dt);
  total += dt;
});
for (const [key, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(count)))
  console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${key}`);
