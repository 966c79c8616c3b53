/** The README's Hugging Face example is a verbatim part of examples/hugging-face.ts, which runs. */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ask } from '../examples/hugging-face.js';
import { HfTokenizer, loadHfModel } from '../src/index.js';

const root = join(import.meta.dirname, '..');

describe('examples/hugging-face.ts', () => {
  it("holds the README's example verbatim", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Hugging Face models'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    const strip = (s: string) =>
      s
        .split('\n')
        .map((l) => l.trim())
        .join('\n');
    expect(strip(readFileSync(join(root, 'examples', 'hugging-face.ts'), 'utf8'))).toContain(
      strip(block!).trim(),
    );
  });

  it('answers from a test checkpoint and saves a folder that loads back', async () => {
    const folder = join(root, 'test', 'fixtures', 'hf', 'models', 'qwen3');
    const out = await mkdtemp(join(tmpdir(), 'hf-example-'));
    try {
      const answer = await ask(folder, 'What is the capital of France?', join(out, 'copy'));
      expect(typeof answer).toBe('string');
      expect((await readdir(join(out, 'copy'))).sort()).toEqual([
        'config.json',
        'generation_config.json',
        'model.safetensors',
        'tokenizer.json',
        'tokenizer_config.json',
      ]);
      // The copy answers the same (greedy decoding of the same weights and tokenizer).
      expect(await ask(join(out, 'copy'), 'What is the capital of France?')).toBe(answer);
      const again = await loadHfModel(join(out, 'copy'));
      expect(again.architecture).toBe('qwen3');
      again.model.dispose();
      expect((await HfTokenizer.load(join(out, 'copy'))).chatTemplate).toContain('<|im_start|>');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
