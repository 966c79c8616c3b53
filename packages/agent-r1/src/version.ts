/** This package's name and version, as its package.json says (stored in checkpoints, shown by the CLI). */
import { readFileSync } from 'node:fs';

export const LIBRARY_NAME = '@agent-r1/agent';

let cached: string | undefined;

function readVersion(): string {
  try {
    // src/version.ts and dist/version.js both sit one folder below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function libraryVersion(): string {
  cached ??= readVersion();
  return cached;
}
