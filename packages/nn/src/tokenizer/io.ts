/** Reading tokenizer files: JSON with errors that name the file. (Writes go through io/atomic.ts.) */
import { readFile } from 'node:fs/promises';

/** Reads and parses a JSON file; errors name the file. */
export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`Cannot read tokenizer file ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`Invalid tokenizer file ${path}: not valid JSON (${(err as Error).message})`);
  }
}
