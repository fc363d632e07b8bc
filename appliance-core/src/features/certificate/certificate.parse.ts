/**
 * Reads an uploaded certificate file: PEM (certificates and a private key, possibly encrypted),
 * DER (one certificate) or PKCS#12 (node-forge: certificates and keys, with or without a
 * password). Nothing here touches the disk. The private key comes out as unencrypted PKCS#8 PEM;
 * the certificate is the one the key belongs to (or, without a key, the one no other certificate
 * of the file was issued by), and the chain the others in issuing order.
 */
import crypto, { X509Certificate, type KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import forge from 'node-forge';

/** The upload is not a usable certificate: answered 400 `{error}` with this text. */
export class CertificateInputError extends Error {}

export type BundleFormat = 'pem' | 'der' | 'pkcs12';

export interface ParsedBundle {
  format: BundleFormat;
  /** The certificate (PEM). */
  certificate: string;
  /** Its issuers, nearest first (PEM). */
  chain: string[];
  /** Certificates of the file that belong to neither (PEM). */
  unrelated: string[];
  /** Unencrypted PKCS#8 PEM, null when the file holds none. */
  privateKey: string | null;
  /** Whether the key belongs to the certificate (null without a key). */
  keyMatches: boolean | null;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]{1,40})-----([\s\S]*?)-----END \1-----/g;
const KEY_LABELS = new Set([
  'PRIVATE KEY',
  'RSA PRIVATE KEY',
  'EC PRIVATE KEY',
  'ENCRYPTED PRIVATE KEY',
]);
const MAX_CERTIFICATES = 16;

const pemOf = (der: Buffer) =>
  `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .replace(/.{64}/g, '$&\n')
    .replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;

const exportKey = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }) as string;

function privateKeyFrom(pem: string, password: string | undefined): KeyObject {
  if (!password && /ENCRYPTED/.test(pem))
    throw new CertificateInputError('The private key is encrypted: a password is required');
  try {
    return crypto.createPrivateKey({
      key: pem,
      format: 'pem',
      ...(password ? { passphrase: password } : {}),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MISSING_PASSPHRASE')
      throw new CertificateInputError('The private key is encrypted: a password is required');
    throw new CertificateInputError(
      password
        ? 'The private key cannot be read (wrong password or damaged key)'
        : 'The private key cannot be read',
    );
  }
}

function certificateFrom(data: Buffer | string): X509Certificate {
  try {
    return new X509Certificate(data);
  } catch {
    throw new CertificateInputError('A certificate of the file cannot be read');
  }
}

function fromPem(text: string, password: string | undefined) {
  const certs: X509Certificate[] = [];
  const keys: KeyObject[] = [];
  for (const match of text.matchAll(PEM_BLOCK)) {
    const label = match[1]!;
    if (label === 'CERTIFICATE') certs.push(certificateFrom(match[0]));
    else if (KEY_LABELS.has(label)) keys.push(privateKeyFrom(match[0], password));
  }
  return { certs, keys };
}

/**
 * The most key-derivation iterations a PKCS#12 file may ask for (MAC and each encryption).
 * node-forge derives the MAC key in JavaScript on the event loop: 200,000 iterations took 3.6 s
 * here, so a file asking for 2^31 would stall the appliance for hours. Exporters use 2,000 to
 * 10,000 (OpenSSL 2,048, Windows 2,000, Java 10,000).
 */
export const MAX_PKCS12_ITERATIONS = 100_000;

const UNIVERSAL = forge.asn1.Class.UNIVERSAL;
const { OCTETSTRING, INTEGER } = forge.asn1.Type;

/**
 * The largest iteration count in the file's readable structure: every (salt OCTET STRING,
 * iterations INTEGER) pair, which is how MacData, PKCS#12 PBE parameters and PBKDF2 parameters
 * all write it, in the outer structure and inside OCTET STRINGs that hold DER (the authenticated
 * safe, its plain SafeContents, a shrouded key bag). Bounded in depth and in nodes visited.
 */
function largestIterationCount(root: forge.asn1.Asn1): number {
  let largest = 0;
  let visited = 0;
  const walk = (node: forge.asn1.Asn1, depth: number): void => {
    if (depth > 24 || ++visited > 20_000)
      throw new CertificateInputError('The PKCS#12 file is too complex');
    if (!Array.isArray(node.value)) {
      const bytes = node.value;
      if (
        node.tagClass === UNIVERSAL &&
        node.type === OCTETSTRING &&
        bytes.charCodeAt(0) === 0x30
      ) {
        let inner: forge.asn1.Asn1 | null = null;
        try {
          inner = forge.asn1.fromDer(forge.util.createBuffer(bytes), true);
        } catch {
          inner = null; // not DER (a salt, a digest, ciphertext): nothing to look into
        }
        if (inner) walk(inner, depth + 1);
      }
      return;
    }
    const children = node.value;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      const next = children[i + 1];
      if (
        child.tagClass === UNIVERSAL &&
        child.type === OCTETSTRING &&
        next?.tagClass === UNIVERSAL &&
        next.type === INTEGER &&
        typeof next.value === 'string'
      ) {
        const raw = next.value;
        // More than four bytes is more than any count accepted.
        const count =
          raw.length > 4
            ? Number.MAX_SAFE_INTEGER
            : forge.util.createBuffer(raw).getInt(raw.length * 8);
        largest = Math.max(largest, count);
      }
      walk(child, depth + 1);
    }
  };
  walk(root, 0);
  return largest;
}

function fromPkcs12(data: Buffer, password: string | undefined) {
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(data.toString('binary')));
    if (largestIterationCount(asn1) > MAX_PKCS12_ITERATIONS)
      throw new CertificateInputError(
        `The PKCS#12 file asks for more than ${MAX_PKCS12_ITERATIONS} key-derivation iterations`,
      );
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password ?? '');
  } catch (err) {
    if (err instanceof CertificateInputError) throw err;
    const message = (err as Error).message ?? '';
    if (/password|MAC|decrypt/i.test(message))
      throw new CertificateInputError('Wrong password or damaged PKCS#12 file');
    throw new CertificateInputError('The file is not a PEM, DER or PKCS#12 certificate');
  }
  const derOf = (asn1: forge.asn1.Asn1) => Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
  const certs: X509Certificate[] = [];
  const keys: KeyObject[] = [];
  const certBags = p12.getBags({ bagType: forge.pki.oids.certBag! })[forge.pki.oids.certBag!];
  for (const bag of certBags ?? []) {
    const asn1 = bag.cert
      ? forge.pki.certificateToAsn1(bag.cert)
      : (bag as unknown as { asn1?: forge.asn1.Asn1 }).asn1;
    if (asn1) certs.push(certificateFrom(derOf(asn1)));
  }
  for (const type of [forge.pki.oids.pkcs8ShroudedKeyBag!, forge.pki.oids.keyBag!]) {
    for (const bag of p12.getBags({ bagType: type })[type] ?? []) {
      const asn1 = bag.key
        ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key))
        : (bag as unknown as { asn1?: forge.asn1.Asn1 }).asn1;
      if (!asn1) continue;
      try {
        keys.push(crypto.createPrivateKey({ key: derOf(asn1), format: 'der', type: 'pkcs8' }));
      } catch {
        throw new CertificateInputError('The private key cannot be read');
      }
    }
  }
  return { certs, keys };
}

/** `issuer` issued `subject` (names and signature). */
const issued = (issuer: X509Certificate, subject: X509Certificate) =>
  subject.checkIssued(issuer) && subject.verify(issuer.publicKey);

/** Reads the file; throws CertificateInputError with the answer's text when it cannot. */
export function parseBundle(data: Buffer, password?: string): ParsedBundle {
  const text = data.toString('latin1');
  let format: BundleFormat;
  let found: { certs: X509Certificate[]; keys: KeyObject[] };
  if (text.includes('-----BEGIN ')) {
    format = 'pem';
    found = fromPem(text, password);
  } else {
    let der: X509Certificate | null = null;
    try {
      der = new X509Certificate(data);
    } catch {
      der = null;
    }
    if (der) {
      format = 'der';
      found = { certs: [der], keys: [] };
    } else {
      format = 'pkcs12';
      found = fromPkcs12(data, password);
    }
  }
  const { certs, keys } = found;
  if (certs.length === 0) throw new CertificateInputError('The file holds no certificate');
  if (certs.length > MAX_CERTIFICATES)
    throw new CertificateInputError(`The file holds more than ${MAX_CERTIFICATES} certificates`);
  if (keys.length > 1) throw new CertificateInputError('The file holds more than one private key');
  const key = keys[0] ?? null;
  let leaf: X509Certificate | undefined;
  if (key) leaf = certs.find((c) => c.checkPrivateKey(key));
  leaf ??= certs.find((c) => !certs.some((other) => other !== c && issued(c, other))) ?? certs[0]!;
  const rest = certs.filter((c) => c !== leaf);
  const chain: X509Certificate[] = [];
  let current = leaf;
  while (rest.length > 0 && !issued(current, current)) {
    const index = rest.findIndex((c) => issued(c, current));
    if (index < 0) break;
    current = rest.splice(index, 1)[0]!;
    chain.push(current);
  }
  return {
    format,
    certificate: pemOf(leaf.raw),
    chain: chain.map((c) => pemOf(c.raw)),
    unrelated: rest.map((c) => pemOf(c.raw)),
    privateKey: key ? exportKey(key) : null,
    keyMatches: key ? leaf.checkPrivateKey(key) : null,
  };
}

/** Reads a private key alone (the save endpoint's `key` part): PEM or DER PKCS#8. */
export function parsePrivateKey(data: Buffer, password?: string): string {
  const text = data.toString('latin1');
  if (text.includes('-----BEGIN ')) {
    const { keys } = fromPem(text, password);
    if (keys.length !== 1)
      throw new CertificateInputError('The key file must hold exactly one private key');
    return exportKey(keys[0]!);
  }
  try {
    return exportKey(crypto.createPrivateKey({ key: data, format: 'der', type: 'pkcs8' }));
  } catch {
    throw new CertificateInputError('The private key cannot be read');
  }
}

export interface CertificateSummary {
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
  serialNumber: string;
  fingerprintSha256: string;
  subjectAltNames: string[];
  keyAlgorithm: string;
  selfSigned: boolean;
}

/** What the API shows of a certificate (the first of a PEM text). */
export function summarize(pem: string): CertificateSummary {
  const node = new X509Certificate(pem);
  const parsed = new x509.X509Certificate(node.raw);
  return {
    subject: parsed.subject,
    issuer: parsed.issuer,
    validFrom: new Date(node.validFrom).toISOString(),
    validTo: new Date(node.validTo).toISOString(),
    serialNumber: node.serialNumber,
    fingerprintSha256: node.fingerprint256,
    subjectAltNames: node.subjectAltName ? node.subjectAltName.split(', ') : [],
    keyAlgorithm: node.publicKey.asymmetricKeyType ?? 'unknown',
    selfSigned: issued(node, node),
  };
}
