#!/usr/bin/env node
/**
 * Builds the multi-hop QA dataset and caches it as JSONL.
 *
 *   tsx --conditions=@agent-r1/source packages/agent-r1/src/tasks/multihop-qa/data/build-cli.ts \
 *     [--seed 0] [--out .cache/multihop-qa] [--report]
 *
 * Writes <out>/multihop-v<version>-seed<seed>-…/{corpus,train,validation,test}.jsonl and meta.json;
 * --report also prints the question counts and the single-retrieval recall tables (Markdown).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildMultihopDataset, datasetStats } from './build.js';
import { datasetReport } from './report.js';

export function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      seed: { type: 'string', default: '0' },
      out: { type: 'string', default: '.cache/multihop-qa' },
      report: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log('usage: build-cli [--seed N] [--out DIR] [--report]');
    return 0;
  }
  const seed = Number(values.seed);
  if (!Number.isInteger(seed)) {
    console.error(`--seed must be an integer, got "${values.seed}"`);
    return 2;
  }
  const t0 = Date.now();
  const cacheDir = resolve(values.out);
  const d = buildMultihopDataset({ seed, cacheDir });
  console.log(
    `multihop-qa: ${d.corpus.length} docs, ${d.questions.train.length}/${d.questions.validation.length}/${d.questions.test.length} ` +
      `train/validation/test questions in ${Date.now() - t0} ms (cache: ${cacheDir})`,
  );
  if (values.report) console.log(datasetReport(d).markdown);
  else console.log(JSON.stringify(datasetStats(d)));
  return 0;
}

if (process.argv[1] !== undefined && /build-cli\.(ts|js)$/.test(process.argv[1])) {
  process.exitCode = main(process.argv.slice(2));
}
