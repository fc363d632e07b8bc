import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'appliance-core/src/**/*.test.ts',
      'test/**/*.test.ts',
      'main/**/*.test.ts',
      'electron/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**', 'test/e2e/**'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
