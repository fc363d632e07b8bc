import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPrivateFile, tightenDataDir } from './file-modes.js';

const dirs: string[] = [];
const temp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'modes-'));
  dirs.push(dir);
  return dir;
};
const mode = (file: string) => fs.statSync(file).mode & 0o777;
afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('data dir modes', () => {
  it('creates the database file 0600 whatever the umask, and leaves an existing one alone', () => {
    const dir = temp();
    const old = process.umask(0o022);
    try {
      createPrivateFile(path.join(dir, 'appliance.db'));
      expect(mode(path.join(dir, 'appliance.db'))).toBe(0o600);
      fs.writeFileSync(path.join(dir, 'other.db'), 'x', { mode: 0o644 });
      createPrivateFile(path.join(dir, 'other.db'));
      expect(fs.readFileSync(path.join(dir, 'other.db'), 'utf8')).toBe('x');
    } finally {
      process.umask(old);
    }
  });

  it('tightens the files and directories of an older data dir, not the operator geoip files', () => {
    const dir = temp();
    fs.chmodSync(dir, 0o755);
    fs.mkdirSync(path.join(dir, 'tls'), { mode: 0o755 });
    fs.mkdirSync(path.join(dir, 'geoip'), { mode: 0o755 });
    for (const file of [
      'appliance.db',
      'appliance.db-wal',
      'appliance.db-shm',
      'secret.key',
      'initial-admin-password',
      'tls/cert.pem',
      'tls/key.pem',
      'tls/installed-chain.pem',
      'geoip/City.mmdb',
    ])
      fs.writeFileSync(path.join(dir, file), 'x', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'tls', 'cert.pem'), 0o644);
    expect(tightenDataDir(dir, () => {})).toEqual([]);
    expect(mode(dir)).toBe(0o700);
    expect(mode(path.join(dir, 'tls'))).toBe(0o700);
    for (const file of [
      'appliance.db',
      'appliance.db-wal',
      'appliance.db-shm',
      'secret.key',
      'initial-admin-password',
      'tls/cert.pem',
      'tls/key.pem',
      'tls/installed-chain.pem',
    ])
      expect(mode(path.join(dir, file)), file).toBe(0o600);
    expect(mode(path.join(dir, 'geoip'))).toBe(0o755);
    expect(mode(path.join(dir, 'geoip/City.mmdb'))).toBe(0o644);
  });

  it('logs a chmod that fails and goes on', () => {
    const dir = temp();
    fs.writeFileSync(path.join(dir, 'appliance.db'), 'x', { mode: 0o644 });
    fs.writeFileSync(path.join(dir, 'secret.key'), 'x', { mode: 0o644 });
    const chmod = fs.chmodSync;
    vi.spyOn(fs, 'chmodSync').mockImplementation((file, m) => {
      if (String(file).endsWith('appliance.db'))
        throw Object.assign(new Error('read-only'), { code: 'EROFS' });
      chmod(file, m);
    });
    const warnings: string[] = [];
    expect(tightenDataDir(dir, (m) => warnings.push(m))).toEqual(['appliance.db']);
    expect(warnings).toEqual([
      `cannot set mode 600 on ${path.join(dir, 'appliance.db')} (EROFS); it stays 644`,
    ]);
    expect(mode(path.join(dir, 'secret.key'))).toBe(0o600);
  });
});
