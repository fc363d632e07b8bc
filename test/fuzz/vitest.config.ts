/**
 * The API fuzz (test/fuzz/api.fuzz.test.ts) on its own: `npm run test:fuzz` runs it inside a
 * network namespace with only loopback (test/fuzz/netns.mjs); the default `npm test` leaves it out.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  test: {
    include: ['test/fuzz/**/*.test.ts'],
    environment: 'node',
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
