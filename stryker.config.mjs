// Mutation testing (`npm run test:mutation`; outside `npm test` and CI: a full run takes long).
// The modules where a silent change is most dangerous; each should score >= 80 %, and every
// surviving mutant is either killed by a new test or listed as equivalent in docs/testing.md.
// One module: `npm run test:mutation -- --mutate appliance-core/src/platform/security/password.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'test/mutation/vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  mutate: [
    'appliance-core/src/platform/http/auth-hook.ts',
    'appliance-core/src/platform/http/identity.ts',
    'appliance-core/src/platform/http/route-config.ts',
    'appliance-core/src/platform/http/scoping.ts',
    'appliance-core/src/platform/security/password.ts',
    'appliance-core/src/platform/security/tokens.ts',
    'appliance-core/src/features/oauth/oauth.rules.ts',
    'appliance-core/src/platform/db/storage-writer.ts',
  ],
  checkers: [],
  // The machine is shared: one test runner (run under `nice -n 19`, one module at a time).
  concurrency: 1,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'test-results/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  ignorePatterns: [
    'renderer/dist',
    'main/dist',
    'appliance-core/dist',
    'test-results',
    '.stryker-tmp',
  ],
};
