/** Types of flow-packet.rules.mjs (plain JavaScript for the collector's worker thread). Keep in step. */
export const MAX_TEMPLATES_PER_EXPORTER: number;
export const MAX_TEMPLATES: number;
export const MAX_TEMPLATE_FIELDS: number;
export const HOLD_MS: number;
export const MAX_HELD_PER_EXPORTER: number;
export const MAX_HELD_BYTES: number;

export interface FlowRecord {
  srcIp: string;
  dstIp: string;
  srcPort: number;
  dstPort: number;
  protocol: number;
  /** Sampling applied (bytes and packets times the announced rate). */
  bytes: number;
  packets: number;
  /** UTC ms. */
  startTime: number;
  endTime: number;
  vlan: number | null;
  inIface: number | null;
  outIface: number | null;
  tcpFlags: number | null;
  tos: number | null;
}

export interface DecodeResult {
  /** The header's version (5, 9, 10), null when the datagram is shorter than one. */
  version: number | null;
  /** Records decoded (those of held sets released by a template in this datagram included). */
  records: FlowRecord[];
  /** Why decoding stopped early (the records before the fault are kept), or null. */
  error: string | null;
  /** How many of `records` came from held data sets. */
  released: number;
}

export interface DecoderCounters {
  malformed: number;
  evictions: number;
  withdrawn: number;
  heldSets: number;
  releasedSets: number;
  expiredSets: number;
}

export interface FlowDecoderOptions {
  maxTemplatesPerExporter?: number;
  maxTemplates?: number;
  holdMs?: number;
  maxHeldPerExporter?: number;
  maxHeldBytes?: number;
}

export function ipv6(bytes: Uint8Array, offset: number): string;

export class FlowDecoder {
  constructor(options?: FlowDecoderOptions);
  readonly counters: DecoderCounters;
  readonly templateCount: number;
  readonly heldBytes: number;
  readonly held: readonly unknown[];
  readonly heldCount: number;
  templatesOf(key: string): number;
  decode(bytes: Uint8Array, exporter: string, now: number): DecodeResult;
  expire(now: number): void;
}
