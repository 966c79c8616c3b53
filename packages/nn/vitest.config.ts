import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'nn',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
  },
});
