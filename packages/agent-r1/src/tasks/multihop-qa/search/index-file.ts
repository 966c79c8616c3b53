/** A search index as a file: `SearchIndex.toJSON()` written atomically, and read back with its checks. */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '@agent-r1/nn';
import { SearchIndex } from './bm25.js';

/** Writes the index (documents, options and inverted index) as JSON: to a temporary file, then renamed. */
export async function saveSearchIndex(index: SearchIndex, path: string): Promise<void> {
  try {
    await writeFileAtomic(path, JSON.stringify(index.toJSON()));
  } catch (e) {
    throw new Error(`saveSearchIndex: cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** Reads an index written by `saveSearchIndex`; throws an error naming the file if it is missing or not an index. */
export async function loadSearchIndex(path: string): Promise<SearchIndex> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`loadSearchIndex: no index file at ${path}`, { cause: e });
    throw new Error(`loadSearchIndex: cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(
      `loadSearchIndex: ${path} is not a valid search index (invalid JSON: ${(e as Error).message})`,
      {
        cause: e,
      },
    );
  }
  try {
    return SearchIndex.fromJSON(value, path);
  } catch (e) {
    throw new Error(`loadSearchIndex: ${(e as Error).message}`, { cause: (e as Error).cause });
  }
}
