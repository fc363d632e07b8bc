/**
 * The agent endpoints of spec part 2 (Agent installer, Agent probes, Agent administration), typed
 * from the generated API types (tokens, adoption); probe answers are read defensively
 * (agent-model.ts), since an agent is a separate program. Query keys: the `agents` family.
 *
 * Answers, as the spec states them:
 * - tokens: a bare array of active rows, newest first; create 201 row plus `token` (the plaintext,
 *   only there); revoke 200 `{revoked: true}`, 409 `{error: 'Token already revoked'}`;
 * - adopt-by-token: 200 `{device_id, agent_uuid, enrolled}`, 404 `{error}` for every failure of the
 *   host;
 * - probes: processes 200 `{status: 201, message: [process]}` or 400 `{message}`; disk and file
 *   routes 200 `{status: 201, message}` or HTTP 200 `{status: false, message}`. The client turns
 *   every failure shape into one ApiError carrying the appliance's message.
 */
import { queryOptions } from '@tanstack/react-query';

import {
  api,
  authHeaders,
  buildUrl,
  classifyUnauthorized,
  type ApiBody,
  type ApiResult,
} from '../../lib/api-client.js';
import { failureOf } from '../../lib/api-error.js';
import { getTransport } from '../../lib/transport.js';

export type EnrollmentToken = ApiResult<'/api/agent-tokens', 'get'>[number];
export type CreatedToken = ApiResult<'/api/agent-tokens', 'post'>;
export type TokenDraft = ApiBody<'/api/agent-tokens', 'post'>;
export type AdoptDraft = ApiBody<'/api/agent/adopt-by-token', 'post'>;
export type AdoptAnswer = ApiResult<'/api/agent/adopt-by-token', 'post'>;

export interface ProbeAnswer<T> {
  status: number;
  message: T;
}

export type Arch = 'amd64' | 'arm64';
export const ARCHES: Arch[] = ['amd64', 'arm64'];

export const agentKeys = {
  all: ['agents'] as const,
  tokens: ['agents', 'tokens'] as const,
  processes: (deviceId: number) => ['agents', 'processes', deviceId] as const,
  services: (deviceId: number) => ['agents', 'services', deviceId] as const,
  diskReport: (deviceId: number) => ['agents', 'disk-report', deviceId] as const,
  folder: (deviceId: number, path: string) => ['agents', 'folder', deviceId, path] as const,
};

export const tokensQuery = queryOptions({
  queryKey: agentKeys.tokens,
  queryFn: () => api.get<EnrollmentToken[]>('/api/agent-tokens'),
});

export const createToken = (draft: TokenDraft) =>
  api.post<CreatedToken>('/api/agent-tokens', draft);

export const revokeToken = (id: number) =>
  api.delete<{ revoked: boolean }>(`/api/agent-tokens/${id}`);

export const adoptByKey = (draft: AdoptDraft) =>
  api.post<AdoptAnswer>('/api/agent/adopt-by-token', draft);

/** A probe waits for the agent at most this long (docs/agent-protocol.md, Results). */
export const PROBE_WAIT_MS = 15_000;

/**
 * Probes ask the host each time a section opens or the person refreshes; a failure is not retried
 * (each try can wait 15 s), and a window focus does not ask again.
 */
export const processesQuery = (deviceId: number) =>
  queryOptions({
    queryKey: agentKeys.processes(deviceId),
    queryFn: ({ signal }) =>
      api.post<ProbeAnswer<unknown[]>>(
        '/api/getDeviceProcesses',
        { device_id: deviceId },
        { signal },
      ),
    select: (a) => (Array.isArray(a.message) ? a.message : []),
    retry: false,
    refetchOnWindowFocus: false,
    gcTime: 60_000,
  });

export const servicesQuery = (deviceId: number) =>
  queryOptions({
    queryKey: agentKeys.services(deviceId),
    queryFn: ({ signal }) =>
      api.post<ProbeAnswer<unknown[]>>(
        '/api/getDeviceServices',
        { device_id: deviceId },
        { signal },
      ),
    select: (a) => (Array.isArray(a.message) ? a.message : []),
    retry: false,
    refetchOnWindowFocus: false,
    gcTime: 60_000,
  });

export const diskReportQuery = (deviceId: number) =>
  queryOptions({
    queryKey: agentKeys.diskReport(deviceId),
    queryFn: ({ signal }) =>
      api.post<ProbeAnswer<unknown>>(
        '/api/getDetailedDiskUsage',
        { deviceid: deviceId },
        { signal },
      ),
    select: (a) => a.message,
    retry: false,
    refetchOnWindowFocus: false,
    gcTime: 60_000,
  });

export const generateDiskUsage = (deviceId: number) =>
  api.post<ProbeAnswer<unknown>>('/api/generateDiskUsage', { deviceid: deviceId });

export const folderUsage = (deviceId: number, path: string) =>
  api.post<ProbeAnswer<unknown>>('/api/getFolderUsageFromPath', { deviceid: deviceId, path });

export const deletePath = (deviceId: number, kind: 'file' | 'folder', path: string) =>
  api.post<ProbeAnswer<unknown>>(kind === 'file' ? '/api/tryDeleteFile' : '/api/tryDeleteFolder', {
    deviceid: deviceId,
    path,
  });

/** Thrown when the appliance has no installer staged for an architecture (its 404). */
export class NoInstallerError extends Error {
  constructor(readonly arch: Arch) {
    super(`No installer staged for ${arch}.`);
    this.name = 'NoInstallerError';
  }
}

/** The file name the appliance gave (filename="..."), else appliance-agent-<arch>. */
export function installerName(disposition: string | null, arch: Arch): string {
  const match = /filename="([^"]+)"/.exec(disposition ?? '');
  return match?.[1] ?? `appliance-agent-${arch}`;
}

/**
 * Downloads the installer with the caller's credentials (any signed-in user may) and hands it to
 * the browser; a 404 is "no installer staged", any other failure carries the appliance's message.
 */
export async function downloadInstaller(arch: Arch): Promise<string> {
  const response = await getTransport().fetch(buildUrl('/api/agent/download', { arch }), {
    method: 'GET',
    headers: { accept: 'application/octet-stream, application/json', ...authHeaders() },
  });
  if (response.status === 404) throw new NoInstallerError(arch);
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      // not JSON
    }
    const failure = failureOf(response.status, body);
    if (!failure) throw new Error(`HTTP ${response.status}`);
    // A 401 is a missing permission or an ended session, decided as for every other request.
    throw response.status === 401 ? await classifyUnauthorized(failure) : failure;
  }
  const name = installerName(response.headers.get('content-disposition'), arch);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}
