/**
 * The HTTPS certificate endpoints (permission `sa`, real HTTP codes, `{error}` failures):
 * GET /api/getCertificate (404 while the self-signed certificate is served: read as null),
 * multipart POST /api/extractCertificate and /api/saveCertificate, POST /api/rollbackCertificate.
 * The uploads are multipart, which the JSON client does not send: `upload` posts a FormData
 * through the same transport, headers and failure reading. Query keys: the `certificate` family.
 */
import { queryOptions } from '@tanstack/react-query';

import { api, ApiError, authHeaders, buildUrl } from '../../lib/api-client.js';
import { failureOf } from '../../lib/api-error.js';
import { getTransport } from '../../lib/transport.js';

export interface InstalledCertificate {
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
}

export interface CertificateDetails extends InstalledCertificate {
  serialNumber: string;
  fingerprintSha256: string;
  subjectAltNames: string[];
  keyAlgorithm: string;
  selfSigned: boolean;
}

/** extractCertificate's answer; the page never shows `private_key`. */
export interface Extracted extends CertificateDetails {
  status: 200;
  format: 'pem' | 'der' | 'pkcs12';
  chain: string[];
  keyMatches: boolean | null;
  private_key: string | null;
}

export interface Installed extends CertificateDetails {
  status: 200;
  message: string;
  live: boolean;
  installed: boolean;
  chainLength: number;
}

export const certificateKeys = { all: ['certificate'] as const };

export const certificateQuery = queryOptions({
  queryKey: certificateKeys.all,
  queryFn: async (): Promise<InstalledCertificate | null> => {
    try {
      return await api.get<InstalledCertificate>('/api/getCertificate');
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  },
});

export interface UploadParts {
  file: File;
  key?: File | null;
  password?: string;
}

async function upload<T>(path: string, parts: UploadParts): Promise<T> {
  const form = new FormData();
  form.append('file', parts.file, parts.file.name);
  if (parts.key) form.append('key', parts.key, parts.key.name);
  if (parts.password) form.append('password', parts.password);
  let response: Response;
  try {
    response = await getTransport().fetch(buildUrl(path), {
      method: 'POST',
      headers: { accept: 'application/json', ...authHeaders() },
      body: form,
    });
  } catch {
    throw new ApiError('network', 0, 'The appliance did not answer. Check the connection.');
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    body = text;
  }
  const failure = failureOf(response.status, body);
  if (failure) throw failure;
  return body as T;
}

export const extractCertificate = (parts: UploadParts) =>
  upload<Extracted>('/api/extractCertificate', { file: parts.file, password: parts.password });

export const saveCertificate = (parts: UploadParts) =>
  upload<Installed>('/api/saveCertificate', parts);

export const rollbackCertificate = () => api.post<Installed>('/api/rollbackCertificate');
