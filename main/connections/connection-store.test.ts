import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { ConnectionStore, normalizeApplianceUrl } from './connection-store.js';

const FP_A = Array.from({ length: 32 }, () => 'AA').join(':');
const FP_B = Array.from({ length: 32 }, () => 'BB').join(':');

function storeFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'connections-')), 'connections.json');
}

/** The appliance's own pattern for browser_id (appliance-core auth.schema.ts). */
const BROWSER_ID = /^spa:[0-9a-fA-F-]{36}:[A-Za-z0-9._~-]{1,128}$/;

describe('normalizeApplianceUrl', () => {
  it.each([
    ['https://Appliance.Example.com', 'https://appliance.example.com'],
    ['https://appliance.example.com/', 'https://appliance.example.com'],
    ['https://appliance.example.com:443', 'https://appliance.example.com'],
    ['appliance.example.com:8443', 'https://appliance.example.com:8443'],
    ['  https://10.0.0.5:8443  ', 'https://10.0.0.5:8443'],
    ['https://[::1]:8443', 'https://[::1]:8443'],
  ])('%s -> %s', (input, origin) => {
    expect(normalizeApplianceUrl(input)).toBe(origin);
  });

  it.each([
    ['http://appliance.example.com', /https:\/\/ only/],
    ['ftp://appliance.example.com', /https:\/\/ only/],
    ['https://user:pw@appliance.example.com', /user name or password/],
    ['https://appliance.example.com/console', /without a path/],
    ['https://appliance.example.com/?x=1', /without a path/],
    ['https://appliance.example.com/#x', /without a path/],
    ['', /enter the appliance URL/],
    ['https://', /not a URL/],
  ])('refuses %s', (input, message) => {
    expect(() => normalizeApplianceUrl(input)).toThrow(message);
  });
});

describe('ConnectionStore', () => {
  it('adds, edits and removes remote appliances by URL, and keeps them across starts', () => {
    const file = storeFile();
    const store = new ConnectionStore(file);
    let changes = 0;
    store.onChange(() => changes++);

    const added = store.addRemote({
      url: 'appliance.example.com:8443',
      name: 'Lab',
      pinnedSha256: FP_A.toLowerCase(),
    });
    expect(added).toMatchObject({
      kind: 'remote',
      name: 'Lab',
      origin: 'https://appliance.example.com:8443',
      pinnedSha256: FP_A,
    });
    expect(added.id).toMatch(/^c-[0-9a-f]{12}$/);
    expect(() =>
      store.addRemote({ url: 'https://appliance.example.com:8443/', pinnedSha256: FP_A }),
    ).toThrow(/already saved as "Lab"/);

    store.update(added.id, { name: 'Lab 2', origin: 'https://10.0.0.9', pinnedSha256: FP_B });
    const reopened = new ConnectionStore(file);
    expect(reopened.get(added.id)).toMatchObject({
      name: 'Lab 2',
      origin: 'https://10.0.0.9',
      pinnedSha256: FP_B,
    });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    store.remove(added.id);
    expect(store.list()).toEqual([]);
    expect(changes).toBe(3);
    expect(() => store.remove(added.id)).toThrow(/no such connection/);
  });

  it('fixes browser_id per installation and connection, in the form the appliance accepts', () => {
    const file = storeFile();
    const store = new ConnectionStore(file);
    const one = store.addRemote({ url: 'https://a.example.com', pinnedSha256: FP_A });
    const two = store.addRemote({ url: 'https://b.example.com', pinnedSha256: FP_A });
    const id = store.browserIdOf(one);
    expect(id).toMatch(BROWSER_ID);
    expect(store.browserIdOf(two)).not.toBe(id);
    // Same installation, same connection, next start: the same browser_id.
    const again = new ConnectionStore(file);
    expect(again.browserIdOf(again.get(one.id)!)).toBe(id);
    // Another installation: another fingerprint.
    const other = new ConnectionStore(storeFile());
    expect(other.installationFingerprint).not.toBe(store.installationFingerprint);
  });

  it('keeps the embedded appliance first, updates where it listens, and never removes it', () => {
    const store = new ConnectionStore(storeFile());
    store.addRemote({ url: 'https://a.example.com', pinnedSha256: FP_A });
    const embedded = store.upsertEmbedded('https://127.0.0.1:40001', FP_A);
    expect(store.list()[0]).toEqual(embedded);
    const moved = store.upsertEmbedded('https://127.0.0.1:40002', FP_B);
    expect(moved).toMatchObject({
      id: 'embedded',
      origin: 'https://127.0.0.1:40002',
      pinnedSha256: FP_B,
    });
    expect(moved.browserUuid).toBe(embedded.browserUuid);
    expect(() => store.remove('embedded')).toThrow(/cannot be removed/);
    expect(() => store.update('embedded', { origin: 'https://x.example.com' })).toThrow(
      /no URL to edit/,
    );
  });

  it('refuses a damaged file rather than overwriting it', () => {
    const file = storeFile();
    fs.writeFileSync(file, '{"version": 9}');
    expect(() => new ConnectionStore(file)).toThrow(/not a connections file/);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"version": 9}');
  });
});
