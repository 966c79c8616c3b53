/**
 * Tokenizer benchmark: `npx tsx --conditions=@agent-r1/source benchmarks/src/tokenizer.ts
 * [--vocab 4096] [--train-mb 3] [--encode-mb 10]`.
 *
 * Corpus: real English prose already on disk, the README/LICENSE/*.md files under node_modules (fenced code
 * removed, paragraphs de-duplicated, taken in sorted path order). Every 10th paragraph is held out to
 * measure compression; the rest, shuffled with a seeded PRNG and repeated, make the training text. If too
 * little is found, a seeded generator of English-like text stands in. Prints train time, tokens per byte on
 * the held-out text, and encode/decode throughput on `--encode-mb` of shuffled paragraphs.
 */
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MULTIHOP_SPECIAL_TOKENS } from '@agent-r1/agent';
import { Tokenizer, trainBpe } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';

const { values } = parseArgs({
  options: {
    vocab: { type: 'string', default: '4096' },
    'train-mb': { type: 'string', default: '3' },
    'encode-mb': { type: 'string', default: '10' },
  },
  strict: true,
});
const vocabSize = Number(values.vocab);
const trainBytes = Number(values['train-mb']) * 1e6;
const encodeBytes = Number(values['encode-mb']) * 1e6;

/** The multi-hop task's special tokens, and a padding token. */
const SPECIALS = [...MULTIHOP_SPECIAL_TOKENS, '<pad>'];

/** Numbers uniform on [0, 1) from the tensor library's seeded generator. */
function prng(seed: number): () => number {
  const generator = new Generator(seed);
  return () => generator.random();
}

function shuffled<T>(xs: readonly T[], rand: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Files under `dir` whose name passes `want`, in sorted order, following no symlinks. */
function findFiles(dir: string, want: (name: string) => boolean, out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) {
      if (name !== '.bin' && name !== '.cache') findFiles(path, want, out);
    } else if (st?.isFile() && want(name)) {
      out.push(path);
    }
  }
  return out;
}

/** De-duplicated prose paragraphs from node_modules, with fenced code blocks dropped. */
function realParagraphs(root: string): string[] {
  const seen = new Set<string>();
  const paras: string[] = [];
  const isProse = (name: string) => /\.(md|markdown|txt)$/i.test(name) || /^(readme|licen[sc]e)$/i.test(name);
  for (const file of findFiles(join(root, 'node_modules'), isProse)) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const raw of text.split(/\n\s*\n/)) {
      const p = raw.trim();
      if (p.length < 40 || seen.has(p)) continue;
      seen.add(p);
      paras.push(p);
    }
  }
  return paras;
}

/** Up to `bytes` of distinct text from the TypeScript declaration files under node_modules. */
function declarationText(root: string, bytes: number): string {
  let text = '';
  for (const file of findFiles(join(root, 'node_modules'), (name) => name.endsWith('.d.ts'))) {
    text += readFileSync(file, 'utf8');
    if (text.length >= bytes) return text.slice(0, bytes);
  }
  return text;
}

/** Fallback: paragraphs of pseudo-words built from syllables, Zipf-distributed. */
function generatedParagraphs(count: number): string[] {
  const rand = prng(7);
  const syl = ['ta', 'ne', 'ro', 'mi', 'ka', 'lo', 'se', 'di', 'ver', 'an', 'th', 'ing', 'ed', 'er', 'st'];
  const words = Array.from({ length: 2000 }, () => {
    let w = '';
    for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) w += syl[Math.floor(rand() * syl.length)];
    return w;
  });
  const pick = () => words[Math.floor(words.length * rand() ** 3)];
  return Array.from({ length: count }, () => {
    const ws = Array.from({ length: 20 + Math.floor(rand() * 60) }, pick);
    return `${ws.join(' ')}.`;
  });
}

/** Joins paragraphs (shuffled anew each pass) until the text reaches `bytes` UTF-8 bytes. */
function build(paras: readonly string[], bytes: number, seed: number): string {
  const rand = prng(seed);
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    for (const p of shuffled(paras, rand)) {
      parts.push(p);
      size += Buffer.byteLength(p) + 2;
      if (size >= bytes) break;
    }
  }
  return parts.join('\n\n');
}

const mb = (s: string) => Buffer.byteLength(s) / 1e6;
const root = resolve(fileURLToPath(import.meta.url), '../../..');

let paras = realParagraphs(root);
let source = 'node_modules prose (README/LICENSE/*.md)';
if (paras.reduce((n, p) => n + p.length, 0) < 200_000) {
  paras = generatedParagraphs(20_000);
  source = 'generated pseudo-English (fallback)';
}
const heldOut = paras.filter((_, i) => i % 10 === 0);
const trainParas = paras.filter((_, i) => i % 10 !== 0);
const uniqueTrain = trainParas.reduce((n, p) => n + Buffer.byteLength(p) + 2, 0) / 1e6;
const trainText = build(trainParas, trainBytes, 1);
const heldText = heldOut.join('\n\n');
const encodeText = build(paras, encodeBytes, 2);

console.log(
  `Tokenizer benchmark — node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`,
);
console.log(
  `corpus: ${source}; ${paras.length} paragraphs, ${uniqueTrain.toFixed(2)} MB distinct training text`,
);

let t0 = performance.now();
const tok = trainBpe([trainText], { vocabSize, specialTokens: SPECIALS });
const trainS = (performance.now() - t0) / 1000;
console.log(
  `train: vocab ${tok.vocabSize} (${tok.numMerges} merges) on ${mb(trainText).toFixed(2)} MB in ${trainS.toFixed(2)} s`,
);

// Training cost grows with the number of distinct pre-tokens; code has far more of them than prose.
const code = declarationText(root, 5e6);
if (code.length > 1e6) {
  t0 = performance.now();
  const codeTok = trainBpe([code], { vocabSize, specialTokens: SPECIALS });
  const codeS = (performance.now() - t0) / 1000;
  console.log(
    `train: vocab ${codeTok.vocabSize} on ${mb(code).toFixed(2)} MB of distinct .d.ts text in ${codeS.toFixed(2)} s`,
  );
}

const heldIds = tok.encode(heldText);
const tpb = heldIds.length / Buffer.byteLength(heldText);
console.log(
  `held-out: ${mb(heldText).toFixed(2)} MB → ${heldIds.length} tokens, ${tpb.toFixed(3)} tokens/byte ` +
    `(${(1 / tpb).toFixed(2)} bytes/token)`,
);
if (tok.decode(heldIds) !== heldText) throw new Error('held-out text did not round-trip');

// Encode with a fresh tokenizer (empty word cache), then again with the cache warm.
const fresh = Tokenizer.fromJSON(tok.toJSON());
t0 = performance.now();
const ids = fresh.encode(encodeText);
const coldS = (performance.now() - t0) / 1000;
t0 = performance.now();
fresh.encode(encodeText);
const warmS = (performance.now() - t0) / 1000;
t0 = performance.now();
const back = fresh.decode(ids);
const decodeS = (performance.now() - t0) / 1000;
if (back !== encodeText) throw new Error('encode text did not round-trip');
const size = mb(encodeText);
console.log(
  `encode: ${size.toFixed(2)} MB → ${ids.length} tokens in ${coldS.toFixed(2)} s cold cache ` +
    `(${(size / coldS).toFixed(1)} MB/s), ${warmS.toFixed(2)} s warm (${(size / warmS).toFixed(1)} MB/s)`,
);
console.log(`decode: ${decodeS.toFixed(2)} s (${(size / decodeS).toFixed(1)} MB/s)`);
