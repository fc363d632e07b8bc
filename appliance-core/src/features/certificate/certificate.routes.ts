/**
 * The HTTPS certificate (spec part 3, Appliance settings; permission `sa`, real HTTP codes):
 * - GET /api/getCertificate: the installed certificate (404 while the appliance serves its own
 *   self-signed one);
 * - POST /api/extractCertificate: reads an uploaded PEM, DER or PKCS#12 file and answers what it
 *   holds, private key included (the spec's answer); nothing is stored;
 * - POST /api/saveCertificate (designed): installs a certificate, its chain and its key, and
 *   serves it at once (tls.Server#setSecureContext, no restart); the pair it replaces is kept;
 * - POST /api/rollbackCertificate (designed): swaps the installed pair with the kept one.
 * The key is stored sealed (TlsStore) and never answered by the last two. File names from the
 * client are checked and then ignored: the store writes fixed names only.
 */
import type { FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { SecureContextOptions, Server as TlsServer } from 'node:tls';
import { actorOf, recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { ApiFailure, failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { ErrorBody } from '../../platform/http/schemas.js';
import {
  keyMatches,
  TlsStore,
  TlsStoreError,
  type StoredTls,
} from '../../platform/security/certificate.js';
import {
  CertificateInputError,
  parseBundle,
  parsePrivateKey,
  summarize,
} from './certificate.parse.js';
import {
  CertificateAnswer,
  ExtractAnswer,
  ExtractBody,
  FILE_NAME,
  InstalledAnswer,
  MAX_FILE_BYTES,
  MAX_PASSWORD,
  SaveBody,
} from './certificate.schema.js';

const TAGS = ['settings'];
const MULTIPART = ['multipart/form-data'];
const NOT_INSTALLED = 'No certificate installed';
const INVALID_INSTALLED = 'The installed certificate is invalid';
const STORE_REFUSED =
  'The certificate directory holds a link or an unexpected file: nothing was read or written';

const errors = (internal: string): RouteErrors => ({
  validation: 'error',
  validationStatus: 400,
  failure: 'error',
  internal,
});

interface Upload {
  files: Map<string, Buffer>;
  password: string | undefined;
}

/** Reads the multipart parts: the named files and `password`; anything else is a 400. */
async function readUpload(request: FastifyRequest, fileFields: readonly string[]): Promise<Upload> {
  const files = new Map<string, Buffer>();
  let password: string | undefined;
  if (!request.isMultipart()) throw failure(400, 'file is required');
  try {
    for await (const part of request.parts({
      // Busboy would hand over the file name's last path segment only: the whole name is checked.
      preservePath: true,
      limits: {
        fileSize: MAX_FILE_BYTES,
        files: fileFields.length + 1,
        fields: 2,
        parts: fileFields.length + 3,
        fieldSize: MAX_PASSWORD,
        fieldNameSize: 64,
        headerPairs: 16,
      },
    })) {
      if (part.type === 'file') {
        if (!fileFields.includes(part.fieldname) || files.has(part.fieldname)) {
          part.file.resume();
          throw failure(400, 'Unexpected file in the upload');
        }
        if (!FILE_NAME.test(part.filename) || part.filename.includes('..')) {
          part.file.resume();
          throw failure(400, 'Invalid file name');
        }
        files.set(part.fieldname, await part.toBuffer());
      } else {
        if (part.fieldname !== 'password' || password !== undefined)
          throw failure(
            400,
            fileFields.includes(part.fieldname)
              ? `${part.fieldname} must be a file`
              : 'Unexpected field in the upload',
          );
        if (part.valueTruncated || String(part.value).length > MAX_PASSWORD)
          throw failure(400, `password must be at most ${MAX_PASSWORD} characters`);
        password = String(part.value);
      }
    }
  } catch (err) {
    if (err instanceof ApiFailure) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE')
      throw failure(413, `The file is larger than ${MAX_FILE_BYTES / 1024} KB`);
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
      throw failure(400, 'Too many parts in the upload');
    throw failure(400, 'The multipart body cannot be read');
  }
  if (!files.has('file')) throw failure(400, 'file is required');
  if (files.get('file')!.length === 0) throw failure(400, 'file is empty');
  return { files, password: password === '' ? undefined : password };
}

const inputFailure = (err: unknown): never => {
  if (err instanceof CertificateInputError) throw failure(400, err.message);
  throw err;
};

export async function certificateRoutes(app: App, ctx: CoreContext): Promise<void> {
  const store = new TlsStore(ctx.config.dataDir, ctx.secrets);
  const access = allOf('sa');
  const server = app.server as unknown as Partial<TlsServer>;
  /** Serves the pair on new connections; false when the server is plain HTTP (tests only). */
  const serve = (pair: StoredTls): boolean => {
    if (typeof server.setSecureContext !== 'function') return false;
    const options: SecureContextOptions = {
      key: pair.key,
      cert: pair.cert,
      minVersion: 'TLSv1.2',
    };
    server.setSecureContext(options);
    return true;
  };
  const storeFailure = (err: unknown): never => {
    if (err instanceof TlsStoreError) {
      ctx.log.warn({ reason: err.message }, 'certificate directory refused');
      throw failure(400, STORE_REFUSED);
    }
    throw err;
  };

  // The multipart parser only where it is used (its own scope).
  await app.register(async (scope) => {
    await scope.register(multipart, { throwFileSizeLimit: true });
    const routes = scope as unknown as App;

    // spec: part3 > Appliance settings > GET /api/getCertificate
    defineRoute(routes, {
      method: 'GET',
      url: '/api/getCertificate',
      access,
      errors: errors('Failed to read the certificate'),
      tags: TAGS,
      summary: 'The installed HTTPS certificate',
      description:
        'Subject, issuer and validity of the certificate an operator installed. 404 while the appliance serves its own first-boot self-signed certificate (it does not count as installed); 400 when the stored certificate cannot be read.',
      operationId: 'getCertificate',
      response: {
        200: CertificateAnswer,
        400: ErrorBody,
        404: ErrorBody,
      },
      handler: async () => {
        let current;
        try {
          current = store.currentCertificate();
        } catch (err) {
          if (err instanceof TlsStoreError) throw failure(400, INVALID_INSTALLED);
          throw err;
        }
        if (!current || current.selfSigned) throw failure(404, NOT_INSTALLED);
        try {
          const s = summarize(current.cert);
          return {
            subject: s.subject,
            issuer: s.issuer,
            validFrom: s.validFrom,
            validTo: s.validTo,
          };
        } catch {
          throw failure(400, INVALID_INSTALLED);
        }
      },
    });

    // spec: part3 > Appliance settings > POST /api/extractCertificate
    defineRoute(routes, {
      method: 'POST',
      url: '/api/extractCertificate',
      access,
      errors: errors('Failed to read the certificate'),
      tags: TAGS,
      summary: 'Read a certificate file (nothing is stored)',
      description:
        'multipart/form-data only: `file` (PEM, DER or PKCS#12, at most 512 KB) and `password` (at most 1024). Answers the certificate, its private key and its chain as PEM with a description of the certificate; nothing is persisted.',
      operationId: 'extractCertificate',
      accepts: MULTIPART,
      consumes: MULTIPART,
      body: ExtractBody,
      response: { 200: ExtractAnswer, 400: ErrorBody, 413: ErrorBody },
      handler: async (request) => {
        const upload = await readUpload(request, ['file']);
        let bundle;
        try {
          bundle = parseBundle(upload.files.get('file')!, upload.password);
        } catch (err) {
          return inputFailure(err);
        }
        return {
          status: 200 as const,
          certificate: bundle.certificate,
          private_key: bundle.privateKey,
          chain: [...bundle.chain, ...bundle.unrelated],
          format: bundle.format,
          keyMatches: bundle.keyMatches,
          ...summarize(bundle.certificate),
        };
      },
    });

    // designed: POST /api/saveCertificate
    defineRoute(routes, {
      method: 'POST',
      url: '/api/saveCertificate',
      access,
      errors: errors('Failed to install the certificate'),
      tags: TAGS,
      summary: 'Install the HTTPS certificate (served at once)',
      description:
        'multipart/form-data: `file` (PEM, DER or PKCS#12 with the certificate, optionally its chain and its key), `key` (the private key, when `file` holds none) and `password`. The key must belong to the certificate, the chain must be its issuers, and the certificate must be valid now. New HTTPS connections get it at once (no restart); the pair it replaces is kept for POST /api/rollbackCertificate. The private key is stored sealed and never answered.',
      operationId: 'saveCertificate',
      accepts: MULTIPART,
      consumes: MULTIPART,
      body: SaveBody,
      response: { 200: InstalledAnswer, 400: ErrorBody, 413: ErrorBody },
      handler: async (request) => {
        const upload = await readUpload(request, ['file', 'key']);
        let bundle;
        let key: string | null;
        try {
          bundle = parseBundle(upload.files.get('file')!, upload.password);
          const keyFile = upload.files.get('key');
          if (keyFile && bundle.privateKey)
            throw new CertificateInputError('The private key was sent twice (in file and as key)');
          key = keyFile ? parsePrivateKey(keyFile, upload.password) : bundle.privateKey;
        } catch (err) {
          return inputFailure(err);
        }
        if (!key) throw failure(400, 'A private key is required (in file, or as key)');
        if (!keyMatches(bundle.certificate, key))
          throw failure(400, 'The private key does not match the certificate');
        if (bundle.unrelated.length > 0)
          throw failure(
            400,
            'A certificate of the file does not belong to the certificate’s chain',
          );
        const summary = summarize(bundle.certificate);
        const now = ctx.clock.now();
        if (Date.parse(summary.validTo) <= now) throw failure(400, 'The certificate has expired');
        if (Date.parse(summary.validFrom) > now)
          throw failure(400, 'The certificate is not valid yet');
        const pair: StoredTls = {
          cert: [bundle.certificate, ...bundle.chain].join(''),
          key,
          selfSigned: false,
        };
        let previous: StoredTls | null;
        try {
          store.check();
          previous = store.current();
        } catch (err) {
          return storeFailure(err);
        }
        // Served first: a pair the TLS layer refuses is never stored.
        let live: boolean;
        try {
          live = serve(pair);
        } catch {
          throw failure(400, 'The certificate and key cannot be served');
        }
        try {
          store.install(pair);
        } catch (err) {
          if (live && previous) serve(previous);
          return storeFailure(err);
        }
        recordAudit(ctx.db, now, actorOf(request), {
          action: 'certificate.install',
          outcome: 'success',
          target: { type: 'certificate', label: summary.subject },
          detail: { fingerprint: summary.fingerprintSha256, valid_to: summary.validTo },
        });
        return {
          status: 200 as const,
          message: 'Certificate installed',
          live,
          installed: true,
          chainLength: bundle.chain.length,
          ...summary,
        };
      },
    });

    // designed: POST /api/rollbackCertificate
    defineRoute(routes, {
      method: 'POST',
      url: '/api/rollbackCertificate',
      access,
      errors: errors('Failed to roll back the certificate'),
      tags: TAGS,
      summary: 'Serve the previous HTTPS certificate again',
      description:
        'Swaps the served certificate with the one it replaced (a second roll-back undoes the first); new HTTPS connections get it at once. 404 when there is no previous certificate.',
      operationId: 'rollbackCertificate',
      response: { 200: InstalledAnswer, 400: ErrorBody, 404: ErrorBody },
      handler: async (request) => {
        let restored: StoredTls | null;
        let replaced: StoredTls | null;
        try {
          replaced = store.current();
          restored = store.previous();
        } catch (err) {
          return storeFailure(err);
        }
        if (!restored || !keyMatches(restored.cert, restored.key))
          throw failure(404, 'No previous certificate to roll back to');
        const live = serve(restored);
        try {
          store.rollBack();
        } catch (err) {
          if (live && replaced) serve(replaced);
          return storeFailure(err);
        }
        const summary = summarize(restored.cert);
        recordAudit(ctx.db, ctx.clock.now(), actorOf(request), {
          action: 'certificate.rollback',
          outcome: 'success',
          target: { type: 'certificate', label: summary.subject },
          detail: { fingerprint: summary.fingerprintSha256 },
        });
        return {
          status: 200 as const,
          message: 'Certificate rolled back',
          live,
          installed: !restored.selfSigned,
          chainLength: Math.max(
            0,
            (restored.cert.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 1) - 1,
          ),
          ...summary,
        };
      },
    });
  });
}
