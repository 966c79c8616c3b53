import { fileURLToPath } from 'node:url';
import { defaultClientConditions, defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Relative URLs: the built page works from any folder it is served at.
  base: './',
  // The workspace packages from their TypeScript sources, as the tests and `npm run agent-r1` run them.
  resolve: { conditions: ['@agent-r1/source', ...defaultClientConditions] },
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    // The agent's code is one chunk of about a megabyte before compression: no need to be told.
    chunkSizeWarningLimit: 4096,
  },
  logLevel: 'warn',
});
