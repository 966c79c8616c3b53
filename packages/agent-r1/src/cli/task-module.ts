/**
 * `--task-module <file>`: a user's module that brings its own task to the command line. It registers its
 * task(s) with `registerTask` when imported, or exports a task definition (`export default defineTask(...)`,
 * or a named `task` / `tasks`), which is registered here. A TypeScript module is loaded through tsx when
 * the user's project has it (Node 20 does not run TypeScript by itself).
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { registerTask } from '../tasks/registry.js';
import type { TaskDefinition } from '../tasks/task.js';

const isDefinition = (v: unknown): v is TaskDefinition =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as TaskDefinition).name === 'string' &&
  typeof (v as TaskDefinition).create === 'function';

/** Makes TypeScript importable through the tsx found from `path`'s project; false without tsx. */
async function registerTypeScript(path: string): Promise<boolean> {
  const require = createRequire(path);
  let manifest: string;
  try {
    manifest = require.resolve('tsx/package.json');
  } catch {
    return false;
  }
  // tsx/esm/api's ES module build: its CommonJS build cannot register the loader when imported from ESM.
  const exportsMap = (require(manifest) as { exports: Record<string, { import: { default: string } }> })
    .exports;
  const entry = new URL(exportsMap['./esm/api'].import.default, pathToFileURL(manifest)).href;
  const { register } = (await import(entry)) as { register: () => unknown };
  register();
  return true;
}

/** Imports the module at `file` (relative to the working directory) and registers the tasks it exports. */
export async function loadTaskModule(file: string): Promise<string[]> {
  const path = resolve(file);
  const url = pathToFileURL(path).href;
  let mod: Record<string, unknown>;
  try {
    mod = await import(url);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?ts$/.test(path)) {
      if (!(await registerTypeScript(path)))
        throw new Error(
          `--task-module ${file}: a TypeScript module needs tsx in your project (npm install -D tsx), or compile it to JavaScript`,
        );
      // A new URL: Node keeps the failed import of the first one.
      mod = await import(`${url}?typescript`);
    } else if (code === 'ERR_MODULE_NOT_FOUND' && (e as Error).message.includes(path))
      throw new Error(`--task-module ${file}: no such file (${path})`);
    else throw new Error(`--task-module ${file}: ${(e as Error).message}`);
  }
  const exported = [mod.default, mod.task, ...(Array.isArray(mod.tasks) ? mod.tasks : [])];
  const definitions = exported.filter(isDefinition);
  for (const d of definitions) registerTask(d);
  return definitions.map((d) => d.name);
}
