/**
 * Entry point: `npm run bench [-- --quick] [-- --filter matmul,softmax] [-- --out file.json]`.
 * Runs every benchmark on ours and on tfjs-backend-cpu in the same process, prints the table and writes JSON.
 */
import * as T from '@agent-r1/tensor';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { initTfjs, tfjsTensorCount } from './anchors/tfjs.js';
import {
  type Benchmark,
  DEFAULT_OPTIONS,
  type Library,
  QUICK_OPTIONS,
  maxAbsDiff,
  measure,
} from './harness.js';
import { type Row, formatTable, machineInfo, machineLine, toRow, writeJson } from './report.js';
import { attentionSuite } from './suites/attention.js';
import { elementwiseSuite } from './suites/elementwise.js';
import { matmulSuite } from './suites/matmul.js';
import { mlpSuite } from './suites/mlp.js';
import { normSuite } from './suites/norm.js';
import { softmaxSuite } from './suites/softmax.js';

const USAGE = `Usage: tsx src/run.ts [--quick] [--filter name[,name...]] [--out file.json]
  --quick        fewer repetitions, for a smoke run
  --filter       run only benchmarks whose name contains one of these (e.g. matmul,softmax)
  --out          where to write the JSON results (default: benchmarks/results/latest.json)`;

function parseFlags() {
  try {
    return parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        filter: { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const values = parseFlags();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const started = performance.now();
const options = values.quick ? QUICK_OPTIONS : DEFAULT_OPTIONS;
const outFile = values.out
  ? resolve(process.cwd(), values.out)
  : fileURLToPath(new URL('../results/latest.json', import.meta.url));
const filters = (values.filter ?? '')
  .split(',')
  .map((f) => f.trim().toLowerCase())
  .filter(Boolean);

const all: Benchmark[] = [
  ...matmulSuite(),
  ...elementwiseSuite(),
  ...softmaxSuite(),
  ...normSuite(),
  ...attentionSuite(),
  ...mlpSuite(),
];
const selected = filters.length ? all.filter((b) => filters.some((f) => b.name.includes(f))) : all;
if (selected.length === 0) {
  console.error(
    `No benchmark matches --filter ${values.filter}. Names: ${[...new Set(all.map((b) => b.name))]}`,
  );
  process.exit(1);
}

const machine = machineInfo(await initTfjs(selected.some((b) => b.gradients)));
T.manualSeed(0);
console.log(machineLine(machine));
console.log(`Mode: ${values.quick ? 'quick' : 'default'}; ${selected.length} benchmarks\n`);

const libraries: Library[] = ['ours', 'tfjs'];
const liveTensors: Record<Library, () => number> = { ours: () => T.memory().tensors, tfjs: tfjsTensorCount };
const rows: Row[] = [];
let mismatches = 0;
for (const bench of selected) {
  const measured = libraries.map((library) => {
    const before = liveTensors[library]();
    const runner = bench.setup[library]();
    const m = measure(runner, options);
    runner.dispose();
    const leaked = liveTensors[library]() - before;
    if (leaked !== 0) console.warn(`warning: ${bench.name} (${library}) left ${leaked} tensors alive`);
    console.error(`  ${bench.name} ${bench.shape} ${library}: ${m.medianMs.toFixed(3)} ms (${m.reps} reps)`);
    return m;
  });
  const [ours, tfjs] = measured;
  const [oursRow, tfjsRow] = measured.map((m, i) => toRow(bench, libraries[i], m));
  oursRow.ratio = ours.medianMs / tfjs.medianMs;
  oursRow.maxAbsDiff = maxAbsDiff(ours.output, tfjs.output);
  oursRow.agrees = oursRow.maxAbsDiff <= bench.tolerance;
  if (!oursRow.agrees) {
    mismatches++;
    console.warn(`warning: ${bench.name} ${bench.shape}: outputs differ by ${oursRow.maxAbsDiff}`);
  }
  rows.push(oursRow, tfjsRow);
}

const totalSeconds = (performance.now() - started) / 1e3;
console.log(`\n${formatTable(rows)}\n`);
console.log('ours/tfjs = median time of ours / median time of tfjs in this run (< 1: ours is faster).');
console.log(`Total ${totalSeconds.toFixed(1)} s. Results written to ${outFile}`);
writeJson(
  outFile,
  machine,
  { mode: values.quick ? 'quick' : 'default', filters, ...options },
  rows,
  totalSeconds,
);
if (mismatches > 0) process.exitCode = 1;
