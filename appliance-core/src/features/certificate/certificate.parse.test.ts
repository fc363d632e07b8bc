/**
 * Reading uploads: PEM (with and without an encrypted key), DER, PKCS#12 with and without a
 * password, made by openssl for each run; the chain in issuing order; the refusals.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMaterial, type Material } from './testing/certificate-material.js';
import {
  CertificateInputError,
  parseBundle,
  parsePrivateKey,
  summarize,
} from './certificate.parse.js';

let m: Material;
beforeAll(async () => {
  m = await makeMaterial('parse.test');
}, 60_000);
afterAll(() => fs.rmSync(m.dir, { recursive: true, force: true }));

const sameKey = (a: string, b: string) => expect(a.replace(/\s/g, '')).toBe(b.replace(/\s/g, ''));

describe('parseBundle', () => {
  it('reads PEM: the leaf (whatever the order), its chain and the key', () => {
    const b = parseBundle(Buffer.from(m.caCert + m.key + m.cert));
    expect(b.format).toBe('pem');
    sameKey(b.certificate, m.cert);
    expect(b.chain).toHaveLength(1);
    sameKey(b.chain[0]!, m.caCert);
    expect(b.unrelated).toEqual([]);
    expect(b.keyMatches).toBe(true);
    sameKey(b.privateKey!, m.key);
  });

  it('reads an encrypted PEM key with its password and asks for one without', () => {
    const b = parseBundle(Buffer.from(m.cert + m.encryptedKey), m.p12Password);
    sameKey(b.privateKey!, m.key);
    expect(() => parseBundle(Buffer.from(m.cert + m.encryptedKey))).toThrow(
      'The private key is encrypted: a password is required',
    );
    expect(() => parseBundle(Buffer.from(m.cert + m.encryptedKey), 'wrong')).toThrow(
      CertificateInputError,
    );
  });

  it('reads DER (a certificate alone)', () => {
    const b = parseBundle(m.der);
    expect(b.format).toBe('der');
    sameKey(b.certificate, m.cert);
    expect(b.privateKey).toBeNull();
    expect(b.keyMatches).toBeNull();
  });

  it('reads PKCS#12 with a password, and without one', () => {
    for (const [data, password] of [
      [m.p12, m.p12Password],
      [m.p12NoPassword, undefined],
      [m.p12Sha1TripleDes, m.p12Password],
    ] as const) {
      const b = parseBundle(data, password);
      expect(b.format).toBe('pkcs12');
      sameKey(b.certificate, m.cert);
      sameKey(b.chain[0]!, m.caCert);
      sameKey(b.privateKey!, m.key);
      expect(b.keyMatches).toBe(true);
    }
  });

  it('refuses a wrong PKCS#12 password, garbage, an empty file and a file without certificate', () => {
    expect(() => parseBundle(m.p12, 'wrong')).toThrow('Wrong password or damaged PKCS#12 file');
    expect(() => parseBundle(Buffer.from('hello world'))).toThrow(
      'The file is not a PEM, DER or PKCS#12 certificate',
    );
    expect(() => parseBundle(Buffer.alloc(0))).toThrow(CertificateInputError);
    expect(() => parseBundle(Buffer.from(m.key))).toThrow('The file holds no certificate');
  });

  it('refuses a PKCS#12 file asking for more key-derivation iterations than the limit, at once', () => {
    const started = performance.now();
    expect(() => parseBundle(m.p12ManyIterations, m.p12Password)).toThrow(
      'The PKCS#12 file asks for more than 100000 key-derivation iterations',
    );
    // Refused before any derivation (200,000 iterations take seconds in node-forge).
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('reports a key that does not belong to the certificate', () => {
    const b = parseBundle(Buffer.from(m.caCert + m.key));
    expect(b.keyMatches).toBe(false);
  });
});

describe('parsePrivateKey and summarize', () => {
  it('reads a key alone, and summarizes a certificate', () => {
    sameKey(parsePrivateKey(Buffer.from(m.key)), m.key);
    expect(() => parsePrivateKey(Buffer.from(m.cert))).toThrow(CertificateInputError);
    const s = summarize(m.cert);
    expect(s.subject).toBe('CN=parse.test, O=Test');
    expect(s.issuer).toBe('CN=parse.test CA');
    expect(s.subjectAltNames).toEqual(['DNS:localhost', 'IP Address:127.0.0.1']);
    expect(s.selfSigned).toBe(false);
    expect(s.keyAlgorithm).toBe('ec');
    expect(Date.parse(s.validTo) - Date.parse(s.validFrom)).toBeGreaterThan(29 * 86_400_000);
  });
});
