import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateKey, SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(crypto.randomBytes(32));

  it('seals with a fresh IV each time and opens what it sealed', () => {
    const a = box.seal('public');
    const b = box.seal('public');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:/);
    expect(a).not.toContain('public');
    expect(box.open(a)).toBe('public');
  });

  it('detects tampering and a wrong key', () => {
    const sealed = box.seal('community');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
    expect(() => box.open(`v1:${raw.toString('base64url')}`)).toThrow();
    expect(() => new SecretBox(crypto.randomBytes(32)).open(sealed)).toThrow();
  });

  it('creates the key file once with mode 0600 and reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'key-'));
    const file = path.join(dir, 'secret.key');
    const key = loadOrCreateKey(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateKey(file).equals(key)).toBe(true);
    fs.writeFileSync(file, 'short');
    expect(() => loadOrCreateKey(file)).toThrow(/damaged/);
    fs.rmSync(dir, { recursive: true });
  });
});
