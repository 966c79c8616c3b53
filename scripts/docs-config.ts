/** Writes docs/config.md from the config schemas (`npm run docs:config`). */
import { writeFileSync } from 'node:fs';
import { configReferenceMarkdown } from '../packages/agent-r1/src/trainer/config-docs.js';

const path = new URL('../docs/config.md', import.meta.url);
writeFileSync(path, configReferenceMarkdown());
console.log(`wrote ${path.pathname}`);
