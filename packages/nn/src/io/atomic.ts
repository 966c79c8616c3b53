/**
 * Atomic file writes, shared by every writer in the project (checkpoints, safetensors, tokenizers, search
 * indexes, datasets, plots): the data goes to a temporary file in the same folder, is flushed, and is renamed
 * over the target, so readers see the old file or the new one, never a part. On failure the temporary file is
 * removed and the target is untouched. The folder is created when missing.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A name for a temporary file or folder next to `path`, unique to this process and call. */
export function siblingTempPath(path: string, tag: string): string {
  return join(dirname(path), `.${basename(path)}.${tag}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = siblingTempPath(path, 'tmp');
  try {
    const handle = await open(tmp, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** The synchronous twin of writeFileAtomic, for writers that must not yield (metrics, plots, caches). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = siblingTempPath(path, 'tmp');
  try {
    const fd = openSync(tmp, 'wx');
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Like writeFileAtomic, for data written in pieces (a file larger than one buffer should hold): `fill` calls
 * `write` with each piece in order. The target appears complete, after `fill` returns, or not at all.
 */
export async function writeFileAtomicStreaming(
  path: string,
  fill: (write: (chunk: Uint8Array) => Promise<void>) => Promise<void>,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = siblingTempPath(path, 'tmp');
  try {
    const handle = await open(tmp, 'wx');
    try {
      await fill(async (chunk) => {
        let done = 0;
        while (done < chunk.length) {
          const { bytesWritten } = await handle.write(chunk, done, chunk.length - done);
          done += bytesWritten;
        }
      });
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
