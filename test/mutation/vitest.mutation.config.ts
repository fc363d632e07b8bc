/**
 * The tests Stryker runs against mutants (`npm run test:mutation`): the unit and HTTP-level tests
 * that name the behaviour of the mutated modules (stryker.config.mjs), not the whole suite: each
 * mutant runs only the tests that cover it, and a narrow set keeps a run within the hour here.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'appliance-core/src/platform/security/password.test.ts',
      'appliance-core/src/features/tokens/tokens.routes.test.ts',
      'appliance-core/src/features/oauth/oauth.rules.test.ts',
      'appliance-core/src/platform/http/scoping.test.ts',
      'appliance-core/src/features/devices/devices.scoping.test.ts',
      'appliance-core/src/platform/http/http-conventions.test.ts',
      'appliance-core/src/platform/http/define-route.test.ts',
      'test/contract/contract.test.ts',
      'appliance-core/src/platform/db/storage-writer.test.ts',
    ],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
