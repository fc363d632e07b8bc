import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateTls } from './certificate.js';

describe('TLS identity', () => {
  it('creates a P-256 self-signed certificate for loopback and keeps it across starts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-'));
    const first = await loadOrCreateTls(dir, '127.0.0.1');
    const cert = new X509Certificate(first.cert);
    expect(first.selfSigned).toBe(true);
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(
      cert.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(first.key))),
    ).toBe(true);
    expect(fs.statSync(path.join(dir, 'tls', 'key.pem')).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateTls(dir, '127.0.0.1');
    expect(second.cert).toBe(first.cert);
    fs.rmSync(dir, { recursive: true });
  });

  it('renews a self-signed certificate near expiry but never replaces an installed one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-'));
    const first = await loadOrCreateTls(dir, '127.0.0.1');
    const later = first.validTo.getTime() - 10 * 86_400_000;
    const renewed = await loadOrCreateTls(dir, '127.0.0.1', later);
    expect(renewed.cert).not.toBe(first.cert);
    fs.rmSync(path.join(dir, 'tls', 'self-signed.marker'));
    const kept = await loadOrCreateTls(dir, '127.0.0.1', renewed.validTo.getTime() - 1000);
    expect(kept.cert).toBe(renewed.cert);
    expect(kept.selfSigned).toBe(false);
    fs.rmSync(dir, { recursive: true });
  });
});
