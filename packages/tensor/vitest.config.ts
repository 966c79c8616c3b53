import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'tensor',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
  },
});
