/**
 * A Hugging Face model folder in and out: load its weights and tokenizer, answer one chat message greedily,
 * save the model back in the same layout. Run on a downloaded model (or a test checkpoint):
 *
 *   npx tsx --conditions=@agent-r1/source packages/nn/examples/hugging-face.ts <folder> "<question>" [<out>]
 */
import { pathToFileURL } from 'node:url';
import { HfTokenizer, generate, loadHfModel, saveHfModel } from '../src/index.js';

export async function ask(folder: string, question: string, out?: string): Promise<string> {
  const { model, eosTokenIds, config, generationConfig } = await loadHfModel(folder, { maxLength: 2048 });
  const tokenizer = await HfTokenizer.load(folder);
  const prompt = tokenizer.encodeChat([{ role: 'user', content: question }], { addGenerationPrompt: true });
  const { tokens, cache } = generate(model, [prompt], {
    maxNewTokens: 64,
    temperature: 0,
    stopTokens: eosTokenIds,
  });
  cache.dispose();
  if (out) await saveHfModel(out, model, { config, generationConfig, files: tokenizer.files() });
  model.dispose();
  return tokenizer.decode(tokens[0], { skipSpecialTokens: true });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [folder, question, out] = process.argv.slice(2);
  if (!folder || !question) {
    console.error('usage: hugging-face.ts <folder> "<question>" [<out>]');
    process.exit(2);
  }
  console.log(await ask(folder, question, out));
}
