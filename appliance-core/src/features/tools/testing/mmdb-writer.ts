/**
 * A minimal MaxMind DB (.mmdb) writer, for tests that need a small geolocation database of their
 * own (format: https://maxmind.github.io/MaxMind-DB/). IPv6 tree, 24-bit records; IPv4 networks
 * sit in ::/96 as the format prescribes. Not used by the appliance itself.
 */
import { addressBytes } from '../../../platform/net/targets.js';

export type MmdbValue = string | number | boolean | MmdbValue[] | { [key: string]: MmdbValue };

const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');

function control(type: number, size: number): Buffer {
  let sizeField: number;
  let extra: number[] = [];
  if (size < 29) sizeField = size;
  else if (size < 29 + 256) {
    sizeField = 29;
    extra = [size - 29];
  } else if (size < 285 + 65_536) {
    sizeField = 30;
    extra = [(size - 285) >> 8, (size - 285) & 0xff];
  } else {
    sizeField = 31;
    const n = size - 65_821;
    extra = [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  }
  return type <= 7
    ? Buffer.from([(type << 5) | sizeField, ...extra])
    : Buffer.from([sizeField, type - 7, ...extra]);
}

function unsigned(value: number | bigint, type: number): Buffer {
  const bytes: number[] = [];
  let n = BigInt(value);
  while (n > 0n) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
}

/** Encodes a value in the data-section format (integers as uint32, other numbers as doubles). */
export function encodeValue(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, text.length), text]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value < 2 ** 32) return unsigned(value, 6);
    const double = Buffer.alloc(8);
    double.writeDoubleBE(value);
    return Buffer.concat([control(3, 8), double]);
  }
  if (Array.isArray(value))
    return Buffer.concat([control(11, value.length), ...value.map(encodeValue)]);
  const entries = Object.entries(value);
  return Buffer.concat([
    control(7, entries.length),
    ...entries.flatMap(([k, v]) => [encodeValue(k), encodeValue(v)]),
  ]);
}

interface TrieNode {
  children: [TrieNode | number | null, TrieNode | number | null];
}

function bitsOf(cidr: string): { bytes: Uint8Array; prefix: number } {
  const [address, prefixText] = cidr.split('/') as [string, string];
  const raw = addressBytes(address);
  if (!raw) throw new Error(`not an address: ${cidr}`);
  if (raw.length === 4) {
    const bytes = new Uint8Array(16);
    bytes.set(raw, 12);
    return { bytes, prefix: 96 + Number(prefixText) };
  }
  return { bytes: raw, prefix: Number(prefixText) };
}

/** Builds a database where each CIDR maps to its record. */
export function buildMmdb(
  networks: Record<string, MmdbValue>,
  databaseType = 'Appliance-Test-City',
): Buffer {
  const records: Buffer[] = [];
  const offsets: number[] = [];
  let dataSize = 0;
  const root: TrieNode = { children: [null, null] };
  for (const [cidr, record] of Object.entries(networks)) {
    const encoded = encodeValue(record);
    const index = records.length;
    records.push(encoded);
    offsets.push(dataSize);
    dataSize += encoded.length;
    const { bytes, prefix } = bitsOf(cidr);
    let node = root;
    for (let i = 0; i < prefix; i++) {
      const bit = ((bytes[i >> 3] as number) >> (7 - (i & 7))) & 1;
      if (i === prefix - 1) {
        node.children[bit] = index;
        break;
      }
      let next = node.children[bit];
      if (typeof next !== 'object' || next === null) {
        next = { children: [null, null] };
        node.children[bit] = next;
      }
      node = next;
    }
  }
  // Number the nodes breadth-first.
  const order: TrieNode[] = [];
  const numbers = new Map<TrieNode, number>();
  const queue: TrieNode[] = [root];
  while (queue.length > 0) {
    const node = queue.shift() as TrieNode;
    numbers.set(node, order.length);
    order.push(node);
    for (const child of node.children) if (child && typeof child === 'object') queue.push(child);
  }
  const nodeCount = order.length;
  const tree = Buffer.alloc(nodeCount * 6);
  const recordValue = (child: TrieNode | number | null) => {
    if (child === null) return nodeCount;
    if (typeof child === 'number') return nodeCount + 16 + (offsets[child] as number);
    return numbers.get(child) as number;
  };
  order.forEach((node, i) => {
    tree.writeUIntBE(recordValue(node.children[0]), i * 6, 3);
    tree.writeUIntBE(recordValue(node.children[1]), i * 6 + 3, 3);
  });
  const metadata = Buffer.concat([
    control(7, 9),
    encodeValue('node_count'),
    unsigned(nodeCount, 6),
    encodeValue('record_size'),
    unsigned(24, 5),
    encodeValue('ip_version'),
    unsigned(6, 5),
    encodeValue('database_type'),
    encodeValue(databaseType),
    encodeValue('languages'),
    encodeValue(['en']),
    encodeValue('binary_format_major_version'),
    unsigned(2, 5),
    encodeValue('binary_format_minor_version'),
    unsigned(0, 5),
    encodeValue('build_epoch'),
    unsigned(BigInt(Math.floor(Date.now() / 1000)), 9),
    encodeValue('description'),
    encodeValue({ en: 'test database written by the appliance test suite' }),
  ]);
  return Buffer.concat([tree, Buffer.alloc(16), ...records, METADATA_MARKER, metadata]);
}
