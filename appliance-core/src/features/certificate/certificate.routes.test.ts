/**
 * The certificate endpoints over HTTPS against a real appliance: certificates made by openssl
 * for the run (PEM, DER, PKCS#12 with and without a password) are read and installed, and a new
 * TLS connection to the running server sees the installed one without a restart; roll-back;
 * refusals (key mismatch, foreign chain, expiry, sizes, media types, hostile file names, a link
 * planted in the certificate directory) change nothing; the `sa` gate; the private key's canary
 * never appears in an answer other than extractCertificate's, in /openapi.json or in the log.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import pino from 'pino';
import { Agent, request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { REDACT_PATHS } from '../../platform/logging/logger.js';
import { createSelfSigned } from '../../platform/security/certificate.js';
import { makeMaterial, type Material } from './testing/certificate-material.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const STORE_REFUSED =
  'The certificate directory holds a link or an unexpected file: nothing was read or written';

let h: Harness;
let sa: string;
let other: string;
let a: Material;
let b: Material;
const logLines: string[] = [];
/** Every answer's text, with whether it came from extractCertificate (allowed to hold the key). */
const answers: { url: string; text: string }[] = [];
const agent = new Agent({ connect: { rejectUnauthorized: false } });

interface Part {
  name: string;
  filename?: string;
  data: Buffer | string;
}

function multipartBody(parts: Part[]) {
  const boundary = `----certtest${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n` +
          (part.filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n') +
          '\r\n',
      ),
      Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

async function send(
  url: string,
  options: { token?: string; parts?: Part[]; contentType?: string; body?: string; method?: string },
) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: Buffer | string | undefined = options.body;
  if (options.parts) {
    const built = multipartBody(options.parts);
    headers['content-type'] = built.contentType;
    body = built.body;
  } else if (options.contentType) headers['content-type'] = options.contentType;
  const res = await undiciRequest(`${h.url}${url}`, {
    method: (options.method ?? 'POST') as 'POST',
    headers,
    body,
    dispatcher: agent,
  });
  const text = await res.body.text();
  answers.push({ url, text });
  return { status: res.statusCode, text, body: text ? JSON.parse(text) : undefined };
}

const file = (data: Buffer | string, filename = 'upload.pem'): Part => ({
  name: 'file',
  filename,
  data,
});
const password = (value: string): Part => ({ name: 'password', data: value });
const extract = (parts: Part[], token = sa) => send('/api/extractCertificate', { token, parts });
const save = (parts: Part[], token = sa) => send('/api/saveCertificate', { token, parts });
const rollBack = (token = sa) => send('/api/rollbackCertificate', { token });
const getCertificate = (token = sa) => send('/api/getCertificate', { token, method: 'GET' });

/** The fingerprint a brand-new TLS connection to the appliance is served. */
async function servedFingerprint(): Promise<string> {
  const port = Number(new URL(h.url).port);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert) resolve(cert.fingerprint256);
      else reject(new Error('no peer certificate'));
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.on('error', reject);
  });
}
const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;

/**
 * A new connection that verifies the server against `ca` (host name 127.0.0.1): the fingerprints
 * of the certificates it was sent, the server's first.
 */
async function verifiedChain(ca: string): Promise<string[]> {
  const port = Number(new URL(h.url).port);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, ca: [ca], rejectUnauthorized: true },
      () => {
        const chain: string[] = [];
        let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
        while (cert?.fingerprint256 && !chain.includes(cert.fingerprint256)) {
          chain.push(cert.fingerprint256);
          cert = cert.issuerCertificate;
        }
        socket.end();
        resolve(chain);
      },
    );
    socket.setTimeout(5_000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.on('error', reject);
  });
}

/** Text without whitespace and JSON-escaped line breaks: a PEM body wrapped anywhere still matches. */
const flat = (text: string) => text.replace(/\\n|\s/g, '');

const tlsDir = () => path.join(h.dataDir, 'tls');
/** Names, sizes and contents of the certificate directory: what "changed nothing" compares. */
const snapshot = () =>
  Object.fromEntries(
    fs
      .readdirSync(tlsDir())
      .sort()
      .map((name) => [name, fs.readFileSync(path.join(tlsDir(), name), 'utf8')]),
  );

beforeAll(async () => {
  [a, b] = await Promise.all([makeMaterial('first.test'), makeMaterial('second.test')]);
  const logger = pino(
    { level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    { write: (line: string) => void logLines.push(line) },
  );
  h = await startAppliance({}, { logger });
  sa = await h.login();
  other = (await h.userWith(['system', 'devices', 'logs'])).token;
}, 120_000);
afterAll(async () => {
  await h?.close();
  for (const m of [a, b]) if (m) fs.rmSync(m.dir, { recursive: true, force: true });
});

describe('the sa gate', () => {
  it('denies every certificate endpoint to a caller without sa and changes nothing', async () => {
    const before = snapshot();
    const served = await servedFingerprint();
    for (const res of [
      await getCertificate(other),
      await extract([file(a.cert + a.key)], other),
      await save([file(a.cert + a.key)], other),
      await rollBack(other),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(DENIED);
    }
    expect(snapshot()).toEqual(before);
    expect(await servedFingerprint()).toBe(served);
  });
});

describe('GET /api/getCertificate', () => {
  it('answers 404 while the first-boot self-signed certificate is served', async () => {
    const res = await getCertificate();
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'No certificate installed' });
  });
});

describe('POST /api/extractCertificate', () => {
  it('reads PEM, DER and PKCS#12 (with and without a password) and stores nothing', async () => {
    const before = snapshot();
    const pem = await extract([file(a.caCert + a.key + a.cert)]);
    expect(pem.status).toBe(200);
    expect(pem.body).toMatchObject({
      status: 200,
      format: 'pem',
      keyMatches: true,
      subject: 'CN=first.test, O=Test',
      issuer: 'CN=first.test CA',
      subjectAltNames: ['DNS:localhost', 'IP Address:127.0.0.1'],
      keyAlgorithm: 'ec',
      selfSigned: false,
      fingerprintSha256: fingerprintOf(a.cert),
    });
    expect(pem.body.private_key.replace(/\s/g, '')).toBe(a.key.replace(/\s/g, ''));
    expect(pem.body.chain).toHaveLength(1);
    const der = await extract([file(a.der, 'leaf.der')]);
    expect(der.body).toMatchObject({ status: 200, format: 'der', private_key: null, chain: [] });
    expect(der.body.certificate.replace(/\s/g, '')).toBe(a.cert.replace(/\s/g, ''));
    const p12 = await extract([file(a.p12, 'leaf.p12'), password(a.p12Password)]);
    expect(p12.body).toMatchObject({ status: 200, format: 'pkcs12', keyMatches: true });
    expect(flat(p12.body.private_key)).toContain(a.keyCanary);
    const noPassword = await extract([file(a.p12NoPassword, 'nopass.p12')]);
    expect(noPassword.body).toMatchObject({ status: 200, format: 'pkcs12', keyMatches: true });
    expect(snapshot()).toEqual(before);
  });

  it('refuses what it cannot read with 400 {error}', async () => {
    const cases: [Part[], string][] = [
      [[file(a.p12, 'leaf.p12'), password('wrong')], 'Wrong password or damaged PKCS#12 file'],
      [[file('not a certificate')], 'The file is not a PEM, DER or PKCS#12 certificate'],
      [[file(a.key)], 'The file holds no certificate'],
      [[file(a.cert + a.encryptedKey)], 'The private key is encrypted: a password is required'],
      [[password('x')], 'file is required'],
      [[file('')], 'file is empty'],
      [[file(a.cert), password('x'.repeat(1025))], 'password must be at most 1024 characters'],
      [[file(a.cert), { name: 'other', data: 'x' }], 'Unexpected field in the upload'],
      [
        [file(a.cert), { name: 'key', filename: 'k.pem', data: a.key }],
        'Unexpected file in the upload',
      ],
      [[{ name: 'file', data: a.cert }], 'file must be a file'],
    ];
    for (const [parts, message] of cases) {
      const res = await extract(parts);
      expect(res.status, message).toBe(400);
      expect(res.body, message).toEqual({ error: message });
    }
    // A password of exactly 1024 characters is accepted (and unused for a PEM certificate).
    expect((await extract([file(a.cert), password('x'.repeat(1024))])).status).toBe(200);
  });

  it('refuses a file over 512 KB (413) and any other media type (415)', async () => {
    const big = await extract([
      file(Buffer.concat([Buffer.from(a.cert), Buffer.alloc(512 * 1024)])),
    ]);
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ error: 'The file is larger than 512 KB' });
    // Exactly 512 KB is within the limit (a PEM with trailing text after the blocks).
    const atLimit = Buffer.alloc(512 * 1024, 0x20);
    Buffer.from(a.cert).copy(atLimit);
    expect((await extract([file(atLimit)])).status).toBe(200);
    for (const contentType of [
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
    ]) {
      const res = await send('/api/extractCertificate', {
        token: sa,
        contentType,
        body: contentType === 'application/json' ? JSON.stringify({ file: a.cert }) : 'file=x',
      });
      expect(res.status, contentType).toBe(415);
      expect(res.body.error, contentType).toMatch(/^Unsupported Media Type/);
    }
    const empty = await send('/api/extractCertificate', { token: sa });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ error: 'file is required' });
  });
});

describe('hostile file names', () => {
  it('refuses traversal, absolute and over-long names on extract and save (400), touching nothing', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'cert-outside-'));
    const before = snapshot();
    const names = [
      '..%2f..%2f..%2fetc%2fpasswd',
      '%2e%2e/%2e%2e/etc/passwd',
      '....//....//etc/passwd',
      '../cert.pem',
      '..',
      `${outside}/planted.pem`,
      '/etc/passwd',
      'a'.repeat(300),
      '.hidden',
      'x\\..\\y',
    ];
    for (const name of names) {
      for (const call of [extract, save]) {
        const res = await call([file(a.cert + a.key, name)]);
        expect(res.status, name).toBe(400);
        expect(res.body, name).toEqual({ error: 'Invalid file name' });
      }
      const key = await save([
        file(a.cert, 'ok.pem'),
        { name: 'key', filename: name, data: a.key },
      ]);
      expect(key.body, name).toEqual({ error: 'Invalid file name' });
    }
    expect(snapshot()).toEqual(before);
    expect(fs.readdirSync(outside)).toEqual([]);
    fs.rmSync(outside, { recursive: true });
  });
});

describe('POST /api/saveCertificate and /api/rollbackCertificate', () => {
  it('refuses a key that does not match, a foreign chain, a missing key and an expired certificate, changing nothing', async () => {
    const before = snapshot();
    const served = await servedFingerprint();
    const cases: [Part[], string][] = [
      [[file(a.cert + b.key)], 'The private key does not match the certificate'],
      [
        [file(a.cert), { name: 'key', filename: 'b.key', data: b.key }],
        'The private key does not match the certificate',
      ],
      [
        [file(a.cert + a.key + b.caCert)],
        'A certificate of the file does not belong to the certificate’s chain',
      ],
      [[file(a.cert)], 'A private key is required (in file, or as key)'],
      [
        [file(a.cert + a.key), { name: 'key', filename: 'a.key', data: a.key }],
        'The private key was sent twice (in file and as key)',
      ],
    ];
    for (const [parts, message] of cases) {
      const res = await save(parts);
      expect(res.status, message).toBe(400);
      expect(res.body, message).toEqual({ error: message });
    }
    // Made 830 days ago with an 825-day validity: expired five days ago.
    const old = await createSelfSigned(
      { hostname: 'old.test', bind: '127.0.0.1' },
      Date.now() - 830 * 86_400_000,
    );
    const expired = await save([file(old.cert + old.key)]);
    expect(expired.body).toEqual({ error: 'The certificate has expired' });
    expect(snapshot()).toEqual(before);
    expect(await servedFingerprint()).toBe(served);
    expect((await rollBack()).status).toBe(404);
  });

  it('installs PKCS#12 and PEM + key, served to new connections at once; rolls back and forward', async () => {
    const selfSigned = await servedFingerprint();
    const first = await save([file(a.p12, 'leaf.p12'), password(a.p12Password)]);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 200,
      message: 'Certificate installed',
      live: true,
      installed: true,
      chainLength: 1,
      subject: 'CN=first.test, O=Test',
      fingerprintSha256: fingerprintOf(a.cert),
    });
    expect(first.body).not.toHaveProperty('private_key');
    expect(await servedFingerprint()).toBe(fingerprintOf(a.cert));
    // A client that trusts only the test CA accepts the served certificate for 127.0.0.1.
    expect(await verifiedChain(a.caCert)).toEqual([fingerprintOf(a.cert), fingerprintOf(a.caCert)]);
    await expect(verifiedChain(b.caCert)).rejects.toThrow();
    const got = await getCertificate();
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      subject: 'CN=first.test, O=Test',
      issuer: 'CN=first.test CA',
      validFrom: first.body.validFrom,
      validTo: first.body.validTo,
    });
    // The key is on disk only sealed; the chain is served after the certificate.
    expect(fs.existsSync(path.join(tlsDir(), 'key.pem'))).toBe(false);
    for (const name of fs.readdirSync(tlsDir()))
      expect(fs.readFileSync(path.join(tlsDir(), name), 'utf8'), name).not.toContain(a.keyCanary);
    expect(
      fs.readFileSync(path.join(tlsDir(), 'cert.pem'), 'utf8').match(/BEGIN CERTIFICATE/g),
    ).toHaveLength(2);

    const second = await save([
      file(b.cert, 'b.pem'),
      { name: 'key', filename: 'b.key', data: b.key },
    ]);
    expect(second.body).toMatchObject({
      status: 200,
      chainLength: 0,
      subject: 'CN=second.test, O=Test',
    });
    expect(await servedFingerprint()).toBe(fingerprintOf(b.cert));

    const back = await rollBack();
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({
      status: 200,
      message: 'Certificate rolled back',
      live: true,
      installed: true,
      chainLength: 1,
    });
    expect(await servedFingerprint()).toBe(fingerprintOf(a.cert));
    expect((await getCertificate()).body.subject).toBe('CN=first.test, O=Test');
    const forward = await rollBack();
    expect(forward.body.subject).toBe('CN=second.test, O=Test');
    expect(await servedFingerprint()).toBe(fingerprintOf(b.cert));
    expect(selfSigned).not.toBe(fingerprintOf(b.cert));
    const audit = h.appliance.db
      .prepare(`SELECT action FROM audit_log WHERE action LIKE 'certificate.%' ORDER BY id`)
      .all();
    expect(audit).toEqual([
      { action: 'certificate.install' },
      { action: 'certificate.install' },
      { action: 'certificate.rollback' },
      { action: 'certificate.rollback' },
    ]);
  });

  it('refuses a link planted in the certificate directory (400): nothing outside is read or written', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'cert-outside-'));
    const victim = path.join(outside, 'victim');
    fs.writeFileSync(victim, 'outside\n');
    const served = await servedFingerprint();
    for (const name of ['previous-cert.pem', 'cert.pem', 'key.sealed', 'self-signed.marker']) {
      const link = path.join(tlsDir(), name);
      const saved = fs.existsSync(link) ? fs.readFileSync(link) : null;
      fs.rmSync(link, { force: true });
      fs.symlinkSync(victim, link);
      const res = await save([file(a.cert + a.key)]);
      expect(res.status, name).toBe(400);
      expect(res.body, name).toEqual({ error: STORE_REFUSED });
      const rolled = await rollBack();
      expect(rolled.status, name).toBe(400);
      if (name === 'cert.pem') {
        const got = await getCertificate();
        expect(got.status).toBe(400);
        expect(got.body).toEqual({ error: 'The installed certificate is invalid' });
      }
      expect(fs.readFileSync(victim, 'utf8')).toBe('outside\n');
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
      fs.rmSync(link);
      if (saved) fs.writeFileSync(link, saved, { mode: 0o600 });
    }
    expect(fs.readdirSync(outside)).toEqual(['victim']);
    expect(await servedFingerprint()).toBe(served);
    fs.rmSync(outside, { recursive: true });
  });
});

describe('a damaged certificate directory', () => {
  it('answers 400 {error} from getCertificate for an unreadable certificate or a directory in its place', async () => {
    const certFile = path.join(tlsDir(), 'cert.pem');
    const saved = fs.readFileSync(certFile);
    try {
      fs.writeFileSync(certFile, 'not a certificate\n', { mode: 0o600 });
      const garbage = await getCertificate();
      expect(garbage.status).toBe(400);
      expect(garbage.body).toEqual({ error: 'The installed certificate is invalid' });
      fs.rmSync(certFile);
      fs.mkdirSync(certFile);
      const directory = await getCertificate();
      expect(directory.status).toBe(400);
      expect(directory.body).toEqual({ error: 'The installed certificate is invalid' });
      expect((await save([file(a.cert + a.key)])).body).toEqual({ error: STORE_REFUSED });
    } finally {
      fs.rmSync(certFile, { recursive: true, force: true });
      fs.writeFileSync(certFile, saved, { mode: 0o600 });
    }
    expect((await getCertificate()).status).toBe(200);
  });
});

describe('the private key canary', () => {
  it('appears in no answer but extractCertificate’s, not in /openapi.json, not in the log', async () => {
    const doc = await send('/openapi.json', { method: 'GET' });
    expect(doc.status).toBe(200);
    expect(doc.text).toContain('/api/saveCertificate');
    expect(doc.text).toContain('/api/rollbackCertificate');
    for (const m of [a, b]) {
      for (const answer of answers) {
        if (answer.url === '/api/extractCertificate') continue;
        expect(flat(answer.text), answer.url).not.toContain(m.keyCanary);
      }
      expect(flat(logLines.join('\n'))).not.toContain(m.keyCanary);
      expect(logLines.join('\n')).not.toContain(m.p12Password);
    }
    // The canary is really in extractCertificate's answers (the check above can fail).
    expect(
      answers.some(
        (x) => x.url === '/api/extractCertificate' && flat(x.text).includes(a.keyCanary),
      ),
    ).toBe(true);
    expect(logLines.some((line) => line.includes('certificate directory refused'))).toBe(true);
  });
});

describe('boot with a data dir of an older release', () => {
  it('seals the plaintext key.pem, removes it and serves the installed certificate', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cert-old-data-'));
    fs.mkdirSync(path.join(dataDir, 'tls'), { mode: 0o700 });
    fs.writeFileSync(path.join(dataDir, 'tls', 'cert.pem'), a.cert + a.caCert, { mode: 0o600 });
    fs.writeFileSync(path.join(dataDir, 'tls', 'key.pem'), a.key, { mode: 0o600 });
    const old = await startAppliance({ APPLIANCE_DATA_DIR: dataDir });
    try {
      expect(fs.existsSync(path.join(dataDir, 'tls', 'key.pem'))).toBe(false);
      const sealed = fs.readFileSync(path.join(dataDir, 'tls', 'key.sealed'), 'utf8');
      expect(sealed).toMatch(/^v1:/);
      expect(sealed).not.toContain(a.keyCanary);
      const token = await old.login();
      const got = await old.request('GET', '/api/getCertificate', { token });
      expect(got.status).toBe(200);
      expect(got.body.subject).toBe('CN=first.test, O=Test');
      expect(old.appliance.tls?.cert).toContain(a.cert.trim().split('\n')[1]);
    } finally {
      await old.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
