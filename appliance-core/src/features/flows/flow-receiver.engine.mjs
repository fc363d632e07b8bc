// @ts-check
/**
 * The flow collector's worker thread (started by flow-collector.engine.ts): binds the NetFlow /
 * IPFIX UDP socket, decodes every datagram here (flow-packet.rules.mjs; never on the API
 * thread), enriches each record from the device IP map (a snapshot the main thread keeps
 * current), and hands batches to the storage writer through its own producer client: the rows
 * and the hourly conversation upserts that count them in one atomic group.
 *
 * Invariants:
 * - Never blocks on the database: the writer's client queues up to the feed's own limit; beyond
 *   it a whole batch is dropped and counted (`dropped`); the socket keeps reading.
 * - Every decoded record becomes exactly one of stored, dropped (queue full, or lost with the
 *   writer), or pending; `records = stored + dropped + pending`. A malformed datagram is counted
 *   (`malformed`) and its records before the fault are kept. Held data sets are counted when
 *   held, released or expired (the decoder's counters).
 * - Counters live in a SharedArrayBuffer the main thread reads synchronously, in COUNTER order.
 *
 * Messages: main -> worker {type:'devices', snapshot} | {type:'stop'}; worker -> main
 * {type:'bound', port} | {type:'bind-error', message} | {type:'stopped'}.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { StorageWriterClient } from '../../platform/db/storage-writer.client.mjs';
import { FlowDecoder } from './flow-packet.rules.mjs';

const ROWS_PER_INSERT = 32;
/** Conversation rows per multi-row upsert (flows.writes.ts ROLLUP_ROWS_PER_UPSERT). */
const ROLLUP_ROWS = 16;
const COLUMNS = 20;
const MAX_SRC_PORTS = 64;
const HOUR = 3_600_000;

/** Order of the shared counters (flow-collector.engine.ts reads them in this order). */
const COUNTERS = [
  'datagrams',
  'received',
  'stored',
  'dropped',
  'malformed',
  'held',
  'released',
  'expired',
  'evictions',
  'templates',
];

const parent = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {{host: string, port: number, writerPort: import('node:worker_threads').MessagePort, counters: SharedArrayBuffer, flushMs: number, batchRows: number, receiveBufferSize: number, snapshot: {version: number, entries: {id: number, ip: string, label: string, profile: string}[]}}} */
const data = workerData;
const counters = new Float64Array(data.counters);
const at = Object.fromEntries(COUNTERS.map((name, i) => [name, i]));

const writer = new StorageWriterClient(data.writerPort);
const decoder = new FlowDecoder();

/** @type {Map<string, {id: number, label: string, profile: string}>} */
let deviceByIp = new Map();
let snapshotVersion = 0;
/** @param {{version: number, entries: {id: number, ip: string, label: string, profile: string}[]}} snapshot */
function useSnapshot(snapshot) {
  if (snapshot.version <= snapshotVersion) return;
  snapshotVersion = snapshot.version;
  deviceByIp = new Map(snapshot.entries.map((e) => [e.ip, e]));
}
useSnapshot(data.snapshot);

/** The exporter's address as devices store it (IPv4-mapped IPv6 is its IPv4). */
function exporterOf(/** @type {string} */ address) {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? /** @type {string} */ (mapped[1]) : address;
}

// --- batching ------------------------------------------------------------------------------
/** @type {(number | string | null)[]} */
let params = [];
let rows = 0;
/** @type {Map<string, {params: (number | string | null)[], ports: Set<number>}>} */
let rollup = new Map();
/** @type {NodeJS.Timeout | null} */
let timer = null;

/**
 * The decoder's counts of an earlier receiver (a restart after a crash: the shared array outlives
 * the worker, so the counters carry on). `templates` is not carried: it is the cache held now.
 */
const base = {
  held: counters[at.held] ?? 0,
  released: counters[at.released] ?? 0,
  expired: counters[at.expired] ?? 0,
  evictions: counters[at.evictions] ?? 0,
  malformed: counters[at.malformed] ?? 0,
};

function syncDecoderCounters() {
  const c = decoder.counters;
  counters[at.held] = base.held + c.heldSets;
  counters[at.released] = base.released + c.releasedSets;
  counters[at.expired] = base.expired + c.expiredSets;
  counters[at.evictions] = base.evictions + c.evictions;
  counters[at.malformed] = base.malformed + c.malformed;
  counters[at.templates] = decoder.templateCount;
}
syncDecoderCounters();

/** @param {Buffer} datagram @param {string} address */
function accept(datagram, address) {
  counters[at.datagrams]++;
  const now = Date.now();
  const exporter = exporterOf(address);
  const result = decoder.decode(datagram, exporter, now);
  syncDecoderCounters();
  if (result.records.length === 0) return;
  counters[at.received] += result.records.length;
  for (const r of result.records) {
    const src = deviceByIp.get(r.srcIp);
    const dst = deviceByIp.get(r.dstIp);
    params.push(
      r.startTime,
      r.endTime,
      r.srcIp,
      r.srcPort,
      r.dstIp,
      r.dstPort,
      r.protocol,
      r.bytes,
      r.packets,
      exporter,
      r.vlan,
      r.inIface,
      r.outIface,
      src?.id ?? null,
      src?.label ?? null,
      src?.profile ?? null,
      dst?.id ?? null,
      dst?.label ?? null,
      dst?.profile ?? null,
      now,
    );
    const hour = r.endTime - (((r.endTime % HOUR) + HOUR) % HOUR);
    const key = `${hour}|${r.srcIp}|${r.dstIp}|${r.dstPort}|${r.protocol}|${exporter}|${r.vlan ?? 0}|${r.inIface ?? 0}|${r.outIface ?? 0}`;
    const entry = rollup.get(key);
    if (entry) {
      const p = entry.params;
      p[10] = /** @type {number} */ (p[10]) + r.bytes;
      p[11] = /** @type {number} */ (p[11]) + r.packets;
      p[12] = /** @type {number} */ (p[12]) + 1;
      p[13] = Math.min(/** @type {number} */ (p[13]), r.startTime);
      p[14] = Math.max(/** @type {number} */ (p[14]), r.endTime);
      if (entry.ports.size < MAX_SRC_PORTS) entry.ports.add(r.srcPort);
    } else
      rollup.set(key, {
        ports: new Set([r.srcPort]),
        params: [
          hour,
          r.srcIp,
          r.dstIp,
          r.dstPort,
          r.protocol,
          exporter,
          r.vlan ?? 0,
          r.inIface ?? 0,
          r.outIface ?? 0,
          null,
          r.bytes,
          r.packets,
          1,
          r.startTime,
          r.endTime,
          src?.id ?? null,
          src?.label ?? null,
          src?.profile ?? null,
          dst?.id ?? null,
          dst?.label ?? null,
          dst?.profile ?? null,
        ],
      });
    if (rows++ === 0) timer = setTimeout(flush, data.flushMs);
  }
  if (rows >= data.batchRows) flush();
}

function flush() {
  if (timer) clearTimeout(timer);
  timer = null;
  if (rows === 0) return;
  /** @type {{statement: string, params: (number | string | null)[]}[]} */
  const ops = [];
  const full = rows - (rows % ROWS_PER_INSERT);
  for (let r = 0; r < full; r += ROWS_PER_INSERT)
    ops.push({
      statement: 'flows.insert-many',
      params: params.slice(r * COLUMNS, (r + ROWS_PER_INSERT) * COLUMNS),
    });
  for (let r = full; r < rows; r++)
    ops.push({ statement: 'flows.insert', params: params.slice(r * COLUMNS, (r + 1) * COLUMNS) });
  const conversations = [...rollup.values()];
  for (const c of conversations) c.params[9] = JSON.stringify([...c.ports].sort((a, b) => a - b));
  const whole = conversations.length - (conversations.length % ROLLUP_ROWS);
  for (let i = 0; i < whole; i += ROLLUP_ROWS)
    ops.push({
      statement: 'flows.rollup-many',
      params: conversations.slice(i, i + ROLLUP_ROWS).flatMap((c) => c.params),
    });
  for (let i = whole; i < conversations.length; i++)
    ops.push({
      statement: 'flows.rollup',
      params: /** @type {{params: (number | string | null)[]}} */ (conversations[i]).params,
    });
  const count = rows;
  params = [];
  rows = 0;
  rollup = new Map();
  void writer.group(ops).then((result) => {
    if (result.committed) counters[at.stored] += count;
    else counters[at.dropped] += count;
  });
}

// --- socket --------------------------------------------------------------------------------
/** @type {dgram.Socket | null} */
let udp = null;

/** @param {unknown} err @param {string} host @param {number} port */
function describe(err, host, port) {
  const code = /** @type {NodeJS.ErrnoException} */ (err).code;
  const where = `UDP ${host}:${port}`;
  if (code === 'EADDRINUSE') return `${where} is already in use`;
  if (code === 'EACCES') return `no permission to listen on ${where}`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this host (UDP ${port})`;
  return `cannot listen on ${where}: ${/** @type {Error} */ (err).message}`;
}

/** @returns {Promise<number>} */
function bind() {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({
      type: net.isIPv6(data.host) ? 'udp6' : 'udp4',
      reuseAddr: false,
    });
    socket.once('error', (err) => {
      socket.close();
      reject(new Error(describe(err, data.host, data.port)));
    });
    socket.bind({ address: data.host, port: data.port, exclusive: true }, () => {
      socket.removeAllListeners('error');
      try {
        socket.setRecvBufferSize(data.receiveBufferSize);
      } catch {
        // The kernel caps the buffer (net.core.rmem_max); the default still works.
      }
      socket.on('message', (msg, rinfo) => accept(msg, rinfo.address));
      socket.on('error', () => {});
      udp = socket;
      resolve(socket.address().port);
    });
  });
}

// Held data sets expire even when no datagram arrives.
const expiry = setInterval(() => {
  decoder.expire(Date.now());
  syncDecoderCounters();
}, 1000);

bind().then(
  (port) => parent.postMessage({ type: 'bound', port }),
  (err) => parent.postMessage({ type: 'bind-error', message: /** @type {Error} */ (err).message }),
);

parent.on('message', async (/** @type {any} */ msg) => {
  if (msg.type === 'devices') useSnapshot(msg.snapshot);
  else if (msg.type === 'crash') {
    // Test hook (only the engine's thread can post it): an uncaught error, as a bug would throw.
    setImmediate(() => {
      throw new Error('flow receiver: crash requested');
    });
  } else if (msg.type === 'stop') {
    clearInterval(expiry);
    await new Promise((r) => (udp ? udp.close(() => r(undefined)) : r(undefined)));
    flush();
    await writer.close(3000);
    parent.postMessage({ type: 'stopped' });
    parent.close();
  }
});
