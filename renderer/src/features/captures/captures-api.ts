/**
 * The packet capture endpoints of spec part 3 for the console: query keys (the `captures`
 * family), fetchers, the start body built from the form, and the download (a fetch with the
 * caller's credentials, saved through an object URL: a plain link would carry no bearer).
 */
import { queryOptions } from '@tanstack/react-query';

import { api, authHeaders, buildUrl } from '../../lib/api-client.js';
import { failureOf } from '../../lib/api-error.js';
import { getTransport } from '../../lib/transport.js';

export type CaptureStatus = 'starting' | 'running' | 'stopped' | 'expired' | 'failed';

export interface CaptureFilter {
  hosts?: string[];
  ports?: number[];
  protocols?: ('tcp' | 'udp' | 'icmp')[];
  vlans?: number[];
  ifaces?: string[];
}

export interface Capture {
  id: number;
  user_id: number;
  device_id: number | null;
  label: string | null;
  filter: CaptureFilter;
  status: CaptureStatus;
  started_at: string | null;
  ended_at: string | null;
  expires_at: string | null;
  packets: number;
  bytes: number;
  byte_cap: number;
  created_at: string;
  deadline_s: number;
  ephemeral: boolean;
  ifaces: string[];
  engine: 'dumpcap' | 'cap' | null;
  drops: number | null;
  reason: string | null;
}

export const captureKeys = {
  all: ['captures'] as const,
  list: ['captures', 'list'] as const,
  interfaces: ['captures', 'interfaces'] as const,
};

export const isActive = (c: Pick<Capture, 'status'>) =>
  c.status === 'starting' || c.status === 'running';

export const capturesQuery = queryOptions({
  queryKey: captureKeys.list,
  queryFn: () => api.get<{ captures: Capture[] }>('/api/captures'),
  select: (answer) => answer.captures,
  // Live counters: every second while one of the captures runs, else every 30 s.
  refetchInterval: (query) => (query.state.data?.captures.some(isActive) ? 1_000 : 30_000),
});

export const interfacesQuery = queryOptions({
  queryKey: captureKeys.interfaces,
  queryFn: () => api.get<{ interfaces: string[] }>('/api/captures/interfaces'),
  select: (answer) => answer.interfaces,
  staleTime: 60_000,
});

/** What the start form holds (text fields as typed). */
export interface StartDraft {
  label: string;
  ifaces: string[];
  hosts: string;
  ports: string;
  vlans: string;
  protocols: ('tcp' | 'udp' | 'icmp')[];
  byteCapMiB: number | string;
  deadlineS: number | string;
  ephemeral: boolean;
}

export const EMPTY_DRAFT: StartDraft = {
  label: '',
  ifaces: [],
  hosts: '',
  ports: '',
  vlans: '',
  protocols: [],
  byteCapMiB: 10,
  deadlineS: 600,
  ephemeral: false,
};

const words = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter(Boolean);

/** Numbers as typed; a word that is not a whole number is kept as NaN for the appliance to refuse. */
const numbers = (text: string) =>
  words(text).map((w) => (/^\d+$/.test(w) ? Number(w) : Number.NaN));

/** The POST /api/captures body of a draft; empty fields are left out (the appliance's defaults). */
export function startBody(draft: StartDraft): Record<string, unknown> {
  const filter: CaptureFilter = {};
  const hosts = words(draft.hosts);
  if (hosts.length) filter.hosts = hosts;
  const ports = numbers(draft.ports);
  if (ports.length) filter.ports = ports;
  const vlans = numbers(draft.vlans);
  if (vlans.length) filter.vlans = vlans;
  if (draft.protocols.length) filter.protocols = draft.protocols;
  if (draft.ifaces.length) filter.ifaces = draft.ifaces;
  const body: Record<string, unknown> = { filter, ephemeral: draft.ephemeral };
  if (draft.label.trim()) body.label = draft.label.trim();
  if (draft.byteCapMiB !== '') body.byte_cap = Math.round(Number(draft.byteCapMiB) * 1_048_576);
  if (draft.deadlineS !== '') body.deadline_s = Number(draft.deadlineS);
  return body;
}

export const startCapture = (body: Record<string, unknown>) =>
  api.post<{ capture: Capture }>('/api/captures', body);
export const stopCapture = (id: number) =>
  api.post<{ capture: Capture }>(`/api/captures/${id}/stop`);
export const deleteCapture = (id: number) => api.delete<{ status: 'ok' }>(`/api/captures/${id}`);

/** The attachment name the appliance gave (filename="..."), else capture-<id>.pcapng. */
export function attachmentName(disposition: string | null, id: number): string {
  const match = /filename="([^"]+)"/.exec(disposition ?? '');
  return match?.[1] ?? `capture-${id}.pcapng`;
}

/** Downloads the pcapng file with the caller's credentials and hands it to the browser. */
export async function downloadCapture(id: number): Promise<void> {
  const response = await getTransport().fetch(buildUrl(`/api/captures/${id}/download.pcapng`), {
    method: 'GET',
    headers: { accept: 'application/vnd.tcpdump.pcap, application/json', ...authHeaders() },
  });
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      // not JSON
    }
    throw failureOf(response.status, body) ?? new Error(`HTTP ${response.status}`);
  }
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = attachmentName(response.headers.get('content-disposition'), id);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
