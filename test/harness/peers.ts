/**
 * System programs and peers that tests need. When one is missing a test skips with a message
 * naming the Debian package, except under REQUIRE_PEERS=1 (set by .ci/run), where it fails.
 */
import fs from 'node:fs';
import path from 'node:path';

const SEARCH_PATH = (process.env.PATH ?? '')
  .split(':')
  .concat(['/usr/sbin', '/sbin', '/usr/bin', '/bin']);

export function findProgram(name: string): string | null {
  for (const dir of SEARCH_PATH) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

/**
 * True when `program` is installed. Otherwise: under REQUIRE_PEERS=1 throws (the run fails);
 * else logs why the dependent tests are skipped and returns false.
 */
export function havePeer(program: string, debianPackage: string): boolean {
  if (findProgram(program)) return true;
  const message = `${program} is not installed (Debian package: ${debianPackage}; run npm run setup:debian)`;
  if (process.env.REQUIRE_PEERS === '1') throw new Error(`REQUIRE_PEERS=1: ${message}`);
  console.warn(`skipping tests that need ${message}`);
  return false;
}
