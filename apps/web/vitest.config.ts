import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Resolve workspace packages to their TypeScript sources, so tests never run a stale dist/.
  resolve: { conditions: ['@agent-r1/source'] },
  ssr: { resolve: { conditions: ['@agent-r1/source'] } },
  test: {
    name: 'web',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
  },
});
