#!/usr/bin/env node
/**
 * `npm run test:fuzz [-- vitest arguments]`: runs the API fuzz inside a new network namespace
 * with only loopback up (`unshare -n`, then `ip link set lo up`), appliance and fuzzer both, so
 * that no tool route reaches another address. Without `unshare -n` (not root, no user namespaces)
 * CI and REQUIRE_PEERS=1 fail; a local run reports the test as skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');
const args = ['run', '--config', 'test/fuzz/vitest.config.ts', ...process.argv.slice(2)];
const strict = Boolean(process.env.CI || process.env.REQUIRE_PEERS);

const probe = spawnSync('unshare', ['-n', '--', 'ip', 'link', 'set', 'lo', 'up'], {
  encoding: 'utf8',
});
if (probe.error || probe.status !== 0) {
  const why = `unshare -n unavailable (${(probe.error?.message ?? probe.stderr ?? '').trim() || `exit ${probe.status}`}); the fuzz needs root (or user namespaces) and iproute2`;
  if (strict) {
    console.error(`API fuzz: ${why}`);
    process.exit(1);
  }
  const run = spawnSync(process.execPath, [vitest, ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, FUZZ_NETNS_UNAVAILABLE: why },
  });
  process.exit(run.status ?? 1);
}

const run = spawnSync(
  'unshare',
  [
    '-n',
    '--',
    'sh',
    '-c',
    'ip link set lo up && exec "$@"',
    'sh',
    process.execPath,
    vitest,
    ...args,
  ],
  { cwd: root, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
