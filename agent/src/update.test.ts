import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { b64u, ed25519Sign, rawPublicKey, sha256hex } from './keys.js';
import type { UpdateOffer } from './state.js';
import { installBundle, readTar, updateSigningString, verifyUpdate } from './update.js';

const work = mkdtempSync(path.join(tmpdir(), 'agent-update-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const release = generateKeyPairSync('ed25519').privateKey;
const releaseKey = b64u(rawPublicKey(createPublicKey(release)));

/** An agent bundle as the release process makes it (§8): manifest.json, bin/, dist/ in a gzip tar. */
function makeBundle(
  version: string,
  arch = 'amd64',
  manifest: Record<string, unknown> = {},
): Buffer {
  const root = mkdtempSync(path.join(work, 'src-'));
  writeFileSync(
    path.join(root, 'manifest.json'),
    JSON.stringify({ name: 'netmon-agent', version, arch, ...manifest }),
  );
  mkdirSync(path.join(root, 'dist'));
  mkdirSync(path.join(root, 'bin'));
  writeFileSync(path.join(root, 'dist', 'cli.js'), `console.log('agent ${version}');\n`);
  writeFileSync(
    path.join(root, 'bin', 'netmon-agent'),
    '#!/bin/sh\nexec node "$(dirname "$0")/../dist/cli.js" "$@"\n',
    { mode: 0o755 },
  );
  const out = path.join(work, `bundle-${version}-${Math.random()}.tar.gz`);
  execFileSync('tar', ['-czf', out, '-C', root, 'manifest.json', 'dist', 'bin']);
  return readFileSync(out);
}

function offerFor(bytes: Buffer, version: string, arch = 'amd64', key = release): UpdateOffer {
  const sha256 = sha256hex(bytes);
  return {
    version,
    url: 'https://127.0.0.1/api/agent/download?arch=amd64',
    sha256,
    signature: b64u(ed25519Sign(key, updateSigningString(version, arch, sha256))),
  };
}

const context = { releaseKey, runningVersion: '1.0.0', arch: 'amd64' };

describe('update bundles (§8)', () => {
  it('accepts a bundle whose sha256 and release signature verify, and installs it', () => {
    const bytes = makeBundle('1.1.0');
    const offer = offerFor(bytes, '1.1.0');
    expect(verifyUpdate(offer, bytes, context)).toEqual({ ok: true });
    const stateDir = mkdtempSync(path.join(work, 'state-'));
    const target = installBundle(bytes, offer, { stateDir, arch: 'amd64' });
    expect(readFileSync(path.join(target, 'dist', 'cli.js'), 'utf8')).toContain('agent 1.1.0');
    expect(readlinkSync(path.join(stateDir, 'current'))).toBe(path.join('versions', '1.1.0'));
  });

  it('refuses a bad signature: another key, another version or arch signed, a flipped byte', () => {
    const bytes = makeBundle('1.2.0');
    const otherKey = generateKeyPairSync('ed25519').privateKey;
    expect(verifyUpdate(offerFor(bytes, '1.2.0', 'amd64', otherKey), bytes, context)).toEqual({
      ok: false,
      reason: 'bad signature',
    });
    const signedForArm = offerFor(bytes, '1.2.0', 'arm64');
    expect(verifyUpdate(signedForArm, bytes, context)).toEqual({
      ok: false,
      reason: 'bad signature',
    });
    const good = offerFor(bytes, '1.2.0');
    const sig = Buffer.from(good.signature, 'base64url');
    sig[10] = (sig[10] ?? 0) ^ 1;
    expect(verifyUpdate({ ...good, signature: b64u(sig) }, bytes, context)).toEqual({
      ok: false,
      reason: 'bad signature',
    });
    // The appliance's key (or any key but the release key) never makes code trusted.
    expect(verifyUpdate({ ...good, version: '1.2.1' }, bytes, context)).toEqual({
      ok: false,
      reason: 'bad signature',
    });
  });

  it('refuses a wrong sha256 (bytes changed after signing), and no release key at all', () => {
    const bytes = makeBundle('1.3.0');
    const offer = offerFor(bytes, '1.3.0');
    const changed = Buffer.concat([bytes, Buffer.from([0])]);
    expect(verifyUpdate(offer, changed, context)).toEqual({ ok: false, reason: 'sha256 mismatch' });
    expect(verifyUpdate(offer, bytes, { ...context, releaseKey: undefined })).toEqual({
      ok: false,
      reason: 'no release key configured',
    });
    expect(verifyUpdate(offerFor(bytes, '1.0.0'), bytes, context)).toEqual({
      ok: false,
      reason: 'already running',
    });
  });

  it('refuses a manifest naming another version, and unsafe tar entries', () => {
    const bytes = makeBundle('1.4.0', 'amd64', { version: '9.9.9' });
    const offer = offerFor(bytes, '1.4.0');
    expect(verifyUpdate(offer, bytes, context)).toEqual({ ok: true });
    const stateDir = mkdtempSync(path.join(work, 'state-'));
    expect(() => installBundle(bytes, offer, { stateDir, arch: 'amd64' })).toThrow(/manifest/);
    const header = Buffer.alloc(1024);
    header.write('../escape', 0);
    header.write('0000644\0', 100);
    header.write('00000000000\0', 124);
    header.write('0', 156);
    expect(() => readTar(header)).toThrow(/unsafe path/);
  });
});
