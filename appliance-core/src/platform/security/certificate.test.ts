import crypto, { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSelfSigned, loadOrCreateTls, TlsStore, TlsStoreError } from './certificate.js';
import { SecretBox } from './secret-box.js';

const dirs: string[] = [];
const temp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const box = new SecretBox(crypto.randomBytes(32));
const body = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');

describe('TLS identity', () => {
  it('creates a P-256 self-signed certificate for loopback and keeps it across starts', async () => {
    const dir = temp();
    const first = await loadOrCreateTls(dir, '127.0.0.1', box);
    const cert = new X509Certificate(first.cert);
    expect(first.selfSigned).toBe(true);
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(cert.checkPrivateKey(crypto.createPrivateKey(first.key))).toBe(true);
    // The key is on disk only sealed.
    expect(fs.existsSync(path.join(dir, 'tls', 'key.pem'))).toBe(false);
    const sealed = fs.readFileSync(path.join(dir, 'tls', 'key.sealed'), 'utf8');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain(body(first.key).slice(10, 50));
    expect(fs.statSync(path.join(dir, 'tls', 'key.sealed')).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateTls(dir, '127.0.0.1', box);
    expect(second.cert).toBe(first.cert);
    expect(second.key).toBe(first.key);
  });

  it('renews a self-signed certificate near expiry but never replaces an installed one', async () => {
    const dir = temp();
    const first = await loadOrCreateTls(dir, '127.0.0.1', box);
    const later = first.validTo.getTime() - 10 * 86_400_000;
    const renewed = await loadOrCreateTls(dir, '127.0.0.1', box, later);
    expect(renewed.cert).not.toBe(first.cert);
    fs.rmSync(path.join(dir, 'tls', 'self-signed.marker'));
    const kept = await loadOrCreateTls(dir, '127.0.0.1', box, renewed.validTo.getTime() - 1000);
    expect(kept.cert).toBe(renewed.cert);
    expect(kept.selfSigned).toBe(false);
  });

  it('seals a plaintext key.pem of an older release at start and removes the plaintext', async () => {
    const dir = temp();
    const made = await createSelfSigned({ hostname: 'old', bind: '127.0.0.1' });
    fs.mkdirSync(path.join(dir, 'tls'), { mode: 0o700 });
    fs.writeFileSync(path.join(dir, 'tls', 'cert.pem'), made.cert, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'tls', 'key.pem'), made.key, { mode: 0o600 });
    const loaded = await loadOrCreateTls(dir, '127.0.0.1', box);
    expect(loaded.cert).toBe(made.cert);
    expect(loaded.key).toBe(made.key);
    expect(loaded.selfSigned).toBe(false);
    expect(fs.existsSync(path.join(dir, 'tls', 'key.pem'))).toBe(false);
    const sealed = fs.readFileSync(path.join(dir, 'tls', 'key.sealed'), 'utf8');
    expect(sealed).not.toContain(body(made.key).slice(10, 50));
    expect(box.open(sealed)).toBe(made.key);
  });

  it('keeps an installed pair whose key does not match as the roll-back target', async () => {
    const dir = temp();
    const a = await createSelfSigned({ hostname: 'a', bind: '127.0.0.1' });
    const b = await createSelfSigned({ hostname: 'b', bind: '127.0.0.1' });
    const store = new TlsStore(dir, box);
    store.replaceCurrent({ cert: a.cert, key: b.key, selfSigned: false });
    const loaded = await loadOrCreateTls(dir, '127.0.0.1', box);
    expect(loaded.selfSigned).toBe(true);
    expect(store.previous()).toEqual({ cert: a.cert, key: b.key, selfSigned: false });
  });
});

describe('TlsStore', () => {
  it('installs, keeps the previous pair and rolls back (twice = undo)', async () => {
    const dir = temp();
    const store = new TlsStore(dir, box);
    const a = {
      ...(await createSelfSigned({ hostname: 'a', bind: '127.0.0.1' })),
      selfSigned: true,
    };
    const b = {
      ...(await createSelfSigned({ hostname: 'b', bind: '127.0.0.1' })),
      selfSigned: false,
    };
    store.replaceCurrent(a);
    store.install(b);
    expect(store.current()).toEqual(b);
    expect(store.previous()).toEqual(a);
    expect(store.currentCertificate()).toEqual({ cert: b.cert, selfSigned: false });
    expect(store.rollBack()).toEqual(a);
    expect(store.current()).toEqual(a);
    expect(store.previous()).toEqual(b);
    store.rollBack();
    expect(store.current()).toEqual(b);
    expect(fs.readdirSync(path.join(dir, 'tls')).sort()).toEqual([
      'cert.pem',
      'key.sealed',
      'previous-cert.pem',
      'previous-key.sealed',
      'previous-self-signed.marker',
    ]);
  });

  it('refuses a symbolic link planted in the directory, or as the directory, without touching its target', async () => {
    const dir = temp();
    const outside = temp();
    const target = path.join(outside, 'victim.pem');
    fs.writeFileSync(target, 'outside\n');
    const store = new TlsStore(dir, box);
    const a = {
      ...(await createSelfSigned({ hostname: 'a', bind: '127.0.0.1' })),
      selfSigned: false,
    };
    store.replaceCurrent(a);
    for (const name of ['cert.pem', 'previous-key.sealed', 'key.pem']) {
      const link = path.join(dir, 'tls', name);
      const saved = fs.existsSync(link) ? fs.readFileSync(link) : null;
      fs.rmSync(link, { force: true });
      fs.symlinkSync(target, link);
      expect(() => store.install(a), name).toThrow(TlsStoreError);
      expect(() => store.check(), name).toThrow(TlsStoreError);
      await expect(loadOrCreateTls(dir, '127.0.0.1', box), name).rejects.toThrow(TlsStoreError);
      expect(fs.readFileSync(target, 'utf8')).toBe('outside\n');
      fs.rmSync(link);
      if (saved) fs.writeFileSync(link, saved, { mode: 0o600 });
    }
    // The directory itself a link.
    fs.rmSync(path.join(dir, 'tls'), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, 'tls'));
    expect(() => store.currentCertificate()).toThrow(TlsStoreError);
    expect(() => store.install(a)).toThrow(TlsStoreError);
    expect(fs.readdirSync(outside)).toEqual(['victim.pem']);
  });
});
