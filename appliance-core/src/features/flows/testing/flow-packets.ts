/**
 * Hand-built NetFlow v5, v9 and IPFIX datagrams for the decoder's and the collector's tests.
 * Fields are [id, length] pairs (IPFIX enterprise fields: [id | 0x8000, length, enterprise]);
 * values are numbers, address strings or byte arrays, written big-endian at the field's length.
 */
import net from 'node:net';

export type Field = readonly [id: number, length: number, enterprise?: number];
export type Value = number | string | Uint8Array;

class Writer {
  private readonly parts: number[] = [];
  u(value: number, length: number): this {
    for (let i = length - 1; i >= 0; i--) this.parts.push(Math.floor(value / 256 ** i) % 256);
    return this;
  }
  bytes(values: Iterable<number>): this {
    for (const v of values) this.parts.push(v);
    return this;
  }
  get length(): number {
    return this.parts.length;
  }
  build(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

function ipBytes(text: string): number[] {
  if (net.isIPv4(text)) return text.split('.').map(Number);
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':').filter(Boolean) : [];
  const t = tail ? tail.split(':').filter(Boolean) : [];
  const zeros: string[] = Array<string>(8 - h.length - t.length).fill('0');
  const groups = [...h, ...zeros, ...t];
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
}

function value(w: Writer, field: Field, v: Value): void {
  const length = field[1];
  if (typeof v === 'string') {
    const bytes = ipBytes(v);
    if (length === 0xffff) w.u(bytes.length, 1);
    w.bytes(bytes);
  } else if (v instanceof Uint8Array) {
    if (length === 0xffff) {
      if (v.length < 255) w.u(v.length, 1);
      else w.u(255, 1).u(v.length, 2);
    }
    w.bytes(v);
  } else w.u(v, length);
}

export type Set = { id: number; body: Uint8Array };

/** A template record (v9 and IPFIX: id, count, fields). */
export function templateRecord(id: number, fields: readonly Field[]): Uint8Array {
  const w = new Writer().u(id, 2).u(fields.length, 2);
  for (const f of fields) {
    w.u(f[0], 2).u(f[1], 2);
    if (f[2] !== undefined) w.u(f[2], 4);
  }
  return w.build();
}

/** An IPFIX options template record (id, count, scope count, fields). */
export function ipfixOptionsRecord(
  id: number,
  scope: number,
  fields: readonly Field[],
): Uint8Array {
  const w = new Writer().u(id, 2).u(fields.length, 2).u(scope, 2);
  for (const f of fields) w.u(f[0], 2).u(f[1], 2);
  return w.build();
}

/** A v9 options template record (id, scope bytes, option bytes, fields). */
export function v9OptionsRecord(
  id: number,
  scope: readonly Field[],
  options: readonly Field[],
): Uint8Array {
  const w = new Writer()
    .u(id, 2)
    .u(scope.length * 4, 2)
    .u(options.length * 4, 2);
  for (const f of [...scope, ...options]) w.u(f[0], 2).u(f[1], 2);
  return w.build();
}

/** Data records of a template: one array of values per record, in field order. */
export function dataRecords(
  fields: readonly Field[],
  rows: readonly (readonly Value[])[],
): Uint8Array {
  const w = new Writer();
  for (const row of rows) fields.forEach((f, i) => value(w, f, row[i] as Value));
  return w.build();
}

export function set(id: number, ...records: Uint8Array[]): Set {
  const w = new Writer();
  for (const r of records) w.bytes(r);
  return { id, body: w.build() };
}

/** Appends `n` zero bytes to a set's body (padding). */
export function padded(s: Set, n: number): Set {
  return { id: s.id, body: Uint8Array.from([...s.body, ...new Uint8Array(n)]) };
}

function sets(w: Writer, list: readonly Set[]): void {
  for (const s of list)
    w.u(s.id, 2)
      .u(s.body.length + 4, 2)
      .bytes(s.body);
}

export function v9Packet(
  list: readonly Set[],
  header: { uptime?: number; unixSecs?: number; sequence?: number; sourceId?: number } = {},
): Uint8Array {
  const w = new Writer()
    .u(9, 2)
    .u(list.length, 2)
    .u(header.uptime ?? 100_000, 4)
    .u(header.unixSecs ?? 1_800_000_000, 4)
    .u(header.sequence ?? 1, 4)
    .u(header.sourceId ?? 0, 4);
  sets(w, list);
  return w.build();
}

export function ipfixPacket(
  list: readonly Set[],
  header: { exportSecs?: number; sequence?: number; domain?: number } = {},
): Uint8Array {
  const body = new Writer();
  sets(body, list);
  const bytes = body.build();
  return new Writer()
    .u(10, 2)
    .u(16 + bytes.length, 2)
    .u(header.exportSecs ?? 1_800_000_000, 4)
    .u(header.sequence ?? 1, 4)
    .u(header.domain ?? 0, 4)
    .bytes(bytes)
    .build();
}

export interface V5Record {
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  protocol: number;
  packets: number;
  bytes: number;
  /** Uptime ms of the first and last packet. */
  first: number;
  last: number;
}

export function v5Packet(
  records: readonly V5Record[],
  header: { uptime?: number; unixSecs?: number; sampling?: number } = {},
): Uint8Array {
  const w = new Writer()
    .u(5, 2)
    .u(records.length, 2)
    .u(header.uptime ?? 100_000, 4)
    .u(header.unixSecs ?? 1_800_000_000, 4)
    .u(0, 4)
    .u(1, 4)
    .u(0, 1)
    .u(0, 1)
    .u(header.sampling ?? 0, 2);
  for (const r of records)
    w.bytes(ipBytes(r.src))
      .bytes(ipBytes(r.dst))
      .u(0, 4)
      .u(1, 2)
      .u(2, 2)
      .u(r.packets, 4)
      .u(r.bytes, 4)
      .u(r.first, 4)
      .u(r.last, 4)
      .u(r.srcPort, 2)
      .u(r.dstPort, 2)
      .u(0, 1)
      .u(0x1b, 1)
      .u(r.protocol, 1)
      .u(0, 1)
      .u(0, 2)
      .u(0, 2)
      .u(24, 1)
      .u(24, 1)
      .u(0, 2);
  return w.build();
}

/** The usual IPv4 flow template: addresses, ports, protocol, counters, ms times. */
export const IPV4_FIELDS: readonly Field[] = [
  [8, 4],
  [12, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [2, 4],
  [1, 8],
  [152, 8],
  [153, 8],
];
export const IPV6_FIELDS: readonly Field[] = [
  [27, 16],
  [28, 16],
  [7, 2],
  [11, 2],
  [4, 1],
  [2, 4],
  [1, 8],
  [152, 8],
  [153, 8],
];
/** v9 with uptime-relative times (21 last, 22 first) and interfaces and a VLAN. */
export const V9_FIELDS: readonly Field[] = [
  [8, 4],
  [12, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [2, 4],
  [1, 4],
  [22, 4],
  [21, 4],
  [10, 2],
  [14, 2],
  [58, 2],
];
