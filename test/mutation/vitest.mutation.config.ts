/**
 * The tests Stryker runs against mutants (`npm run test:mutation`): the unit and HTTP-level tests
 * that name the behaviour of the mutated modules (stryker.config.mjs), not the whole suite: each
 * mutant runs only the tests that cover it, and a narrow set keeps a run within the hour here.
 *
 * One module at a time on a shared machine: `MUTATION_TESTS` (comma-separated test files) narrows
 * the set to that module's tests (docs/testing.md, "Mutation testing", lists them per module).
 */
import { defineConfig } from 'vitest/config';

const ALL = [
  'appliance-core/src/platform/security/password.test.ts',
  'appliance-core/src/platform/security/tokens.test.ts',
  'appliance-core/src/features/tokens/tokens.routes.test.ts',
  'appliance-core/src/features/oauth/oauth.rules.test.ts',
  'appliance-core/src/platform/http/scoping.test.ts',
  'appliance-core/src/features/devices/devices.scoping.test.ts',
  'appliance-core/src/platform/http/http-conventions.test.ts',
  'appliance-core/src/platform/http/define-route.test.ts',
  'test/contract/contract.test.ts',
  'appliance-core/src/platform/db/storage-writer.test.ts',
  'appliance-core/src/platform/db/storage-writer.lifecycle.test.ts',
  'appliance-core/src/platform/db/storage-writer.shutdown.test.ts',
  'appliance-core/src/platform/http/auth-hook.test.ts',
  'appliance-core/src/platform/http/identity.test.ts',
  'appliance-core/src/platform/http/route-config.test.ts',
];

const only = process.env.MUTATION_TESTS?.split(',')
  .map((f) => f.trim())
  .filter((f) => f !== '');

export default defineConfig({
  test: {
    include: only && only.length > 0 ? only : ALL,
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
