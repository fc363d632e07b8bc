/**
 * Test material made on the spot with the `openssl` program (through the platform's spawn
 * helper): a CA and a leaf it signs, the leaf as PEM, DER, PKCS#12 (OpenSSL 3 default, no
 * password, OpenSSL 1 style PBE-SHA1-3DES, 200,000 iterations) and an encrypted PKCS#8 key. A
 * stretch of the key's base64 body is the canary the tests look for. Used by the tests only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../../../platform/process/spawn.js';

const OPENSSL = { program: 'openssl', debianPackage: 'openssl' };

export async function openssl(cwd: string, ...args: string[]): Promise<void> {
  // openssl writes relative to its working directory; the spawn helper has none, so paths are absolute.
  const result = await runTool(OPENSSL, {
    args: args.map((a) => (a.startsWith('@') ? path.join(cwd, a.slice(1)) : a)),
    timeoutMs: 30_000,
  });
  if (result.code !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
}

export interface Material {
  dir: string;
  /** The leaf certificate (PEM) and its key (PKCS#8 PEM). */
  cert: string;
  key: string;
  caCert: string;
  /** The key's base64 body without line breaks: must never appear where the key must not. */
  keyCanary: string;
  der: Buffer;
  p12: Buffer;
  p12NoPassword: Buffer;
  /** PKCS#12 as OpenSSL 1 made it by default (PBE-SHA1-3DES, SHA-1 MAC). */
  p12Sha1TripleDes: Buffer;
  /** PKCS#12 asking for 200,000 iterations (MAC and encryption): over the limit. */
  p12ManyIterations: Buffer;
  p12Password: string;
  /** The key encrypted (PKCS#8) under p12Password. */
  encryptedKey: string;
  file(name: string): string;
}

/** A CA and a leaf for `cn` signed by it, valid for `days`. */
export async function makeMaterial(cn: string, days = 30): Promise<Material> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cert-material-'));
  const run = (...args: string[]) => openssl(dir, ...args);
  await run(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    '@ca.key',
    '-out',
    '@ca.pem',
    '-days',
    String(days),
    '-subj',
    `/CN=${cn} CA`,
  );
  await run(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    '@leaf.key',
    '-out',
    '@leaf.csr',
    '-subj',
    `/CN=${cn}/O=Test`,
  );
  fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await run(
    'x509',
    '-req',
    '-in',
    '@leaf.csr',
    '-CA',
    '@ca.pem',
    '-CAkey',
    '@ca.key',
    '-CAcreateserial',
    '-out',
    '@leaf.pem',
    '-days',
    String(days),
    '-extfile',
    '@ext.cnf',
  );
  await run('x509', '-in', '@leaf.pem', '-outform', 'der', '-out', '@leaf.der');
  const p12Password = 'p12-Passw0rd';
  await run(
    'pkcs12',
    '-export',
    '-in',
    '@leaf.pem',
    '-inkey',
    '@leaf.key',
    '-certfile',
    '@ca.pem',
    '-out',
    '@leaf.p12',
    '-passout',
    `pass:${p12Password}`,
  );
  await run(
    'pkcs12',
    '-export',
    '-in',
    '@leaf.pem',
    '-inkey',
    '@leaf.key',
    '-certfile',
    '@ca.pem',
    '-out',
    '@nopass.p12',
    '-passout',
    'pass:',
  );
  await run(
    'pkcs12',
    '-export',
    '-in',
    '@leaf.pem',
    '-inkey',
    '@leaf.key',
    '-certfile',
    '@ca.pem',
    '-out',
    '@old.p12',
    '-keypbe',
    'PBE-SHA1-3DES',
    '-certpbe',
    'PBE-SHA1-3DES',
    '-macalg',
    'sha1',
    '-passout',
    `pass:${p12Password}`,
  );
  await run(
    'pkcs12',
    '-export',
    '-in',
    '@leaf.pem',
    '-inkey',
    '@leaf.key',
    '-out',
    '@slow.p12',
    '-iter',
    '200000',
    '-passout',
    `pass:${p12Password}`,
  );
  await run(
    'pkcs8',
    '-topk8',
    '-in',
    '@leaf.key',
    '-out',
    '@leaf.enc.key',
    '-passout',
    `pass:${p12Password}`,
  );
  const read = (name: string) => fs.readFileSync(path.join(dir, name));
  const key = read('leaf.key').toString('utf8');
  return {
    dir,
    cert: read('leaf.pem').toString('utf8'),
    key,
    caCert: read('ca.pem').toString('utf8'),
    keyCanary: key.replace(/-----[A-Z ]+-----|\s/g, '').slice(20, 80),
    der: read('leaf.der'),
    p12: read('leaf.p12'),
    p12NoPassword: read('nopass.p12'),
    p12Sha1TripleDes: read('old.p12'),
    p12ManyIterations: read('slow.p12'),
    p12Password,
    encryptedKey: read('leaf.enc.key').toString('utf8'),
    file: (name) => path.join(dir, name),
  };
}
