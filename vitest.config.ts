import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'appliance-core/src/**/*.test.ts',
      'test/**/*.test.ts',
      'main/**/*.test.ts',
      'electron/**/*.test.ts',
      // Console component tests: each file opts into a DOM (// @vitest-environment happy-dom).
      'renderer/src/**/*.test.{ts,tsx}',
      // The reference agent (agent/): a separate program, tested with the rest.
      'agent/**/*.test.ts',
    ],
    // The API fuzz runs on its own, inside unshare -n: npm run test:fuzz (test/fuzz/netns.mjs).
    exclude: ['**/node_modules/**', '**/dist/**', 'test/fuzz/**', '.stryker-tmp/**'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
