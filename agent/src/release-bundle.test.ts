import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { UpdateOffer } from './state.js';
import { installBundle, verifyUpdate } from './update.js';

const agentDir = path.resolve(import.meta.dirname, '..');
const script = path.join(agentDir, 'scripts', 'release-bundle.mjs');
const work = mkdtempSync(path.join(tmpdir(), 'agent-release-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const dist = path.join(work, 'dist');
beforeAll(() => {
  // Its own output folder: other tests build agent/dist at the same time.
  execFileSync(
    process.execPath,
    [
      path.join(agentDir, '../node_modules/typescript/bin/tsc'),
      '-p',
      path.join(agentDir, 'tsconfig.json'),
      '--outDir',
      dist,
      '--tsBuildInfoFile',
      path.join(dist, '.tsbuildinfo'),
    ],
    { stdio: 'ignore' },
  );
}, 120_000);

describe('release bundles (agent/scripts/release-bundle.mjs)', () => {
  it('makes a bundle the agent verifies and installs under the release key', () => {
    const keyFile = path.join(work, 'release.pem');
    const releaseKey = execFileSync(process.execPath, [script, '--generate-key', keyFile], {
      encoding: 'utf8',
    }).trim();
    const out = path.join(work, 'amd64');
    execFileSync(process.execPath, [
      script,
      '--key',
      keyFile,
      '--arch',
      'amd64',
      '--out',
      out,
      '--version',
      '2.0.0',
      '--dist',
      dist,
    ]);
    const offer = {
      ...(JSON.parse(readFileSync(path.join(out, 'agent.json'), 'utf8')) as Omit<
        UpdateOffer,
        'url'
      >),
      url: 'https://127.0.0.1/api/agent/download?arch=amd64',
    };
    const bytes = readFileSync(path.join(out, 'agent.tar.gz'));
    expect(
      verifyUpdate(offer, bytes, { releaseKey, runningVersion: '1.0.0', arch: 'amd64' }),
    ).toEqual({ ok: true });
    // Another release key does not verify it.
    const otherKey = execFileSync(
      process.execPath,
      [script, '--generate-key', path.join(work, 'other.pem')],
      {
        encoding: 'utf8',
      },
    ).trim();
    expect(
      verifyUpdate(offer, bytes, { releaseKey: otherKey, runningVersion: '1.0.0', arch: 'amd64' }),
    ).toEqual({
      ok: false,
      reason: 'bad signature',
    });
    const stateDir = mkdtempSync(path.join(work, 'state-'));
    const target = installBundle(bytes, offer, { stateDir, arch: 'amd64' });
    expect(readlinkSync(path.join(stateDir, 'current'))).toBe(path.join('versions', '2.0.0'));
    expect(readFileSync(path.join(target, 'dist', 'cli.js'), 'utf8')).toContain('netmon-agent');
    expect(JSON.parse(readFileSync(path.join(target, 'package.json'), 'utf8'))).toMatchObject({
      version: '2.0.0',
      type: 'module',
    });
    // A key file is never overwritten.
    expect(() =>
      execFileSync(process.execPath, [script, '--generate-key', keyFile], { stdio: 'ignore' }),
    ).toThrow();
  }, 60_000);
});
