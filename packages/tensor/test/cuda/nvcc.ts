/** Finding nvcc the way CI installs it: PATH, then $CUDA_PATH/bin, $CUDA_HOME/bin, /usr/local/cuda/bin. */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findNvcc(env: Record<string, string | undefined> = process.env): string | null {
  const dirs = [
    ...(env.PATH ?? '').split(delimiter).filter(Boolean),
    ...[env.CUDA_PATH, env.CUDA_HOME].filter((d): d is string => !!d).map((d) => join(d, 'bin')),
    '/usr/local/cuda/bin',
  ];
  for (const dir of dirs) {
    const candidate = join(dir, 'nvcc');
    if (existsSync(candidate)) return candidate;
  }
  return null;
}
