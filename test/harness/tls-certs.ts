/**
 * Certificates made by the test: a throw-away CA, leaf certificates it signs, and self-signed
 * ones, for real local TLS servers (pinning, re-pinning, the CA-valid rule).
 */
import crypto, { type webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(
  crypto.webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0],
);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;

export interface TestCertificate {
  cert: string;
  key: string;
  /** `AB:CD:…` as Node prints it. */
  sha256: string;
}

export interface TestCa extends TestCertificate {
  issue(names: string[]): Promise<TestCertificate>;
}

function pemKey(pkcs8: ArrayBuffer): string {
  const base64 = Buffer.from(pkcs8).toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN PRIVATE KEY-----\n${base64}\n-----END PRIVATE KEY-----\n`;
}

function altNames(names: string[]): x509.SubjectAlternativeNameExtension {
  return new x509.SubjectAlternativeNameExtension(
    names.map((value) => ({ type: /^[0-9.:]+$/.test(value) ? 'ip' : 'dns', value })),
  );
}

async function finish(
  cert: x509.X509Certificate,
  keys: webcrypto.CryptoKeyPair,
): Promise<TestCertificate> {
  const pem = `${cert.toString('pem')}\n`;
  const pkcs8 = await crypto.webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { cert: pem, key: pemKey(pkcs8), sha256: new X509Certificate(pem).fingerprint256 };
}

export async function makeSelfSigned(
  names: string[] = ['127.0.0.1', 'localhost'],
): Promise<TestCertificate> {
  const keys = await crypto.webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: crypto.randomBytes(8).toString('hex'),
    name: 'CN=self-signed test appliance',
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 30 * DAY),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      altNames(names),
    ],
  });
  return finish(cert, keys);
}

export async function makeCa(name = 'Test Root CA'): Promise<TestCa> {
  const keys = await crypto.webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: crypto.randomBytes(8).toString('hex'),
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 365 * DAY),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const ca = await finish(caCert, keys);
  return {
    ...ca,
    async issue(names) {
      const leafKeys = await crypto.webcrypto.subtle.generateKey(ALGORITHM, true, [
        'sign',
        'verify',
      ]);
      const leaf = await x509.X509CertificateGenerator.create({
        serialNumber: crypto.randomBytes(8).toString('hex'),
        subject: `CN=${names[0] ?? 'appliance'}`,
        issuer: caCert.subject,
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 30 * DAY),
        signingAlgorithm: ALGORITHM,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          await x509.AuthorityKeyIdentifierExtension.create(caCert),
          altNames(names),
        ],
      });
      return finish(leaf, leafKeys);
    },
  };
}
