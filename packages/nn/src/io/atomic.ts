/**
 * Atomic file writes, shared by every writer in the project (checkpoints, safetensors, tokenizers, search
 * indexes, datasets, plots): the data goes to a temporary file in the same folder, is flushed, and is renamed
 * over the target, so readers see the old file or the new one, never a part. On failure the temporary file is
 * removed and the target is untouched. The folder is created when missing.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A name for a temporary file or folder next to `path`, unique to this process and call. */
export function siblingTempPath(path: string, tag: string): string {
  return join(dirname(path), `.${basename(path)}.${tag}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  await writeFileAtomicStreaming(path, (write) => write(bytes));
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

/**
 * Replaces the folder `dir` whole: `fill` writes the new contents into a temporary sibling folder, which is
 * renamed into place after the old folder has been moved aside (`.<name>.old-*`, removed last). A failure
 * leaves the old folder; a kill between the two renames leaves it moved aside, which recoverCheckpoint
 * (io/checkpoint.ts) puts back.
 */
export async function replaceFolderAtomically(
  dir: string,
  fill: (tmp: string) => Promise<void>,
): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  const tmp = siblingTempPath(dir, 'tmp');
  let old: string | null = null;
  try {
    await mkdir(tmp);
    await fill(tmp);
    if (await pathExists(dir)) {
      old = siblingTempPath(dir, 'old');
      await rename(dir, old);
    }
    try {
      await rename(tmp, dir);
    } catch (err) {
      if (old) await rename(old, dir);
      old = null;
      throw err;
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  if (old) await rm(old, { recursive: true, force: true });
}

/** Whether `path` exists (any error but "no such file" is thrown). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
