import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'agent-r1',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
  },
});
