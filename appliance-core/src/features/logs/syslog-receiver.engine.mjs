// @ts-check
/**
 * The syslog receiver's worker thread (started by syslog.engine.ts): binds the collector's UDP
 * and TCP sockets, frames and parses every message here (never on the API thread), attributes the
 * sender to a device, applies the device's access config, and hands rows to the storage writer
 * through its own producer client, in atomic groups that carry the rows and the per-minute
 * severity rollup that counts them (so the summary never counts a row that is not stored, nor
 * misses one that is).
 *
 * Invariants:
 * - Never blocks on the database: the writer's client queues (up to the feed's own limit) and
 *   posts to the writer's worker; beyond the limit a whole batch is dropped and counted
 *   (`dropped`), the sockets keep reading, memory stays bounded.
 * - Every datagram or TCP frame becomes exactly one of: stored, dropped (queue full, or lost with
 *   the writer), filtered (below the device's min_severity, or intake disabled for it). Malformed
 *   input is stored raw (parser: syslog-message.rules.mjs), never dropped for being malformed.
 *   Counters (received, stored, dropped, filtered, malformed) live in a SharedArrayBuffer the
 *   main thread reads synchronously; `received = stored + dropped + filtered + pending`.
 * - Sockets are bound here (a socket cannot move between threads); a bind failure is posted as
 *   one line naming protocol, address and port (the boot contract: a busy port ends the process).
 *   With port `auto`, TCP takes the number UDP got, retried on a new pair (PAIR_ATTEMPTS), as
 *   platform/net/collector-ports.ts does for the main thread.
 *
 * Messages: main -> worker {type:'devices', snapshot} | {type:'config', deviceId, minSeverity}
 * | {type:'stop'}; worker -> main {type:'bound', port} | {type:'bind-error', message}
 * | {type:'stopped'} | {type:'delay', ms} (intake-to-committed of each group, for the metrics).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { StorageWriterClient } from '../../platform/db/storage-writer.client.mjs';
import { parseSyslog, SyslogFramer } from './syslog-message.rules.mjs';

const PAIR_ATTEMPTS = 8;
/** Rows per multi-row INSERT (logs.writes.ts defines the statement for this many). */
const ROWS_PER_INSERT = 32;
const COLUMNS = 10;
const MAX_TCP_CONNECTIONS = 256;

const parent = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {{host: string, port: number | 'auto', writerPort: import('node:worker_threads').MessagePort, counters: SharedArrayBuffer, flushMs: number, batchRows: number, receiveBufferSize: number, snapshot: {version: number, entries: {id: number, ip: string}[]}, configs: [number, number][]}} */
const data = workerData;
const counters = new Float64Array(data.counters);
// Index of each counter in the shared array (syslog.engine.ts reads them in this order).
const RECEIVED = 0;
const STORED = 1;
const DROPPED = 2;
const FILTERED = 3;
const MALFORMED = 4;

const writer = new StorageWriterClient(data.writerPort);

/** @type {Map<string, number>} */
let deviceByIp = new Map();
let snapshotVersion = 0;
/** @param {{version: number, entries: {id: number, ip: string}[]}} snapshot */
function useSnapshot(snapshot) {
  if (snapshot.version <= snapshotVersion) return;
  snapshotVersion = snapshot.version;
  deviceByIp = new Map(snapshot.entries.map((e) => [e.ip, e.id]));
}
useSnapshot(data.snapshot);
/** device id -> min_severity (-1: disabled). A device without an entry accepts everything. */
const minSeverity = new Map(data.configs);

/** The device key of a socket's remote address (IPv4-mapped IPv6 is its IPv4), as ip-map.cache.ts. */
function deviceOf(/** @type {string} */ address) {
  const direct = deviceByIp.get(address);
  if (direct !== undefined) return direct;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? deviceByIp.get(/** @type {string} */ (mapped[1])) : undefined;
}

// --- batching ------------------------------------------------------------------------------
/** @type {(number | string | null)[]} */
let params = [];
let rows = 0;
/** minute|device|severity -> count, for the rows of the open batch. */
/** @type {Map<string, number>} */
let rollup = new Map();
let firstAt = 0;
/** @type {NodeJS.Timeout | null} */
let timer = null;

/** @param {Buffer} frame @param {string} address */
function accept(frame, address) {
  counters[RECEIVED]++;
  const now = Date.now();
  const record = parseSyslog(frame.toString('utf8'), address, now);
  const deviceId = deviceOf(address);
  if (deviceId !== undefined) {
    const min = minSeverity.get(deviceId);
    if (min !== undefined && record.severity > min) {
      counters[FILTERED]++;
      return;
    }
  }
  if (record.malformed) counters[MALFORMED]++;
  params.push(
    deviceId ?? null,
    now,
    record.facility,
    record.severity,
    record.source,
    record.message,
    record.host,
    address,
    record.reportedAt,
    record.malformed ? 1 : 0,
  );
  const key = `${now - (now % 60_000)}|${deviceId ?? 0}|${record.severity}`;
  rollup.set(key, (rollup.get(key) ?? 0) + 1);
  if (rows++ === 0) {
    firstAt = now;
    timer = setTimeout(flush, data.flushMs);
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
      statement: 'logs.syslog.insert-many',
      params: params.slice(r * COLUMNS, (r + ROWS_PER_INSERT) * COLUMNS),
    });
  for (let r = full; r < rows; r++)
    ops.push({
      statement: 'logs.syslog.insert',
      params: params.slice(r * COLUMNS, (r + 1) * COLUMNS),
    });
  for (const [key, count] of rollup) {
    const [minute, device, severity] = key.split('|').map(Number);
    ops.push({
      statement: 'logs.syslog.rollup',
      params: [minute ?? 0, device ?? 0, severity ?? 0, count],
    });
  }
  const count = rows;
  const startedAt = firstAt;
  params = [];
  rows = 0;
  rollup = new Map();
  void writer.group(ops).then((result) => {
    if (result.committed) {
      counters[STORED] += count;
      parent.postMessage({ type: 'delay', ms: Date.now() - startedAt });
    } else counters[DROPPED] += count;
  });
}

// --- sockets -------------------------------------------------------------------------------
/** @type {dgram.Socket | null} */
let udp = null;
/** @type {net.Server | null} */
let tcp = null;
/** @type {Set<net.Socket>} */
const connections = new Set();

/** @param {unknown} err @param {string} proto @param {string} host @param {number} port */
function describe(err, proto, host, port) {
  const code = /** @type {NodeJS.ErrnoException} */ (err).code;
  const where = `${proto} ${host}:${port}`;
  if (code === 'EADDRINUSE') return `${where} is already in use`;
  if (code === 'EACCES') return `no permission to listen on ${where}`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this host (${proto} ${port})`;
  return `cannot listen on ${where}: ${/** @type {Error} */ (err).message}`;
}

/** @param {string} host @param {number} port @returns {Promise<dgram.Socket>} */
function bindUdp(host, port) {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({
      type: net.isIPv6(host) ? 'udp6' : 'udp4',
      reuseAddr: false,
    });
    socket.once('error', (err) => {
      socket.close();
      reject(
        Object.assign(new Error(describe(err, 'UDP', host, port)), {
          code: /** @type {NodeJS.ErrnoException} */ (err).code,
        }),
      );
    });
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.removeAllListeners('error');
      try {
        socket.setRecvBufferSize(data.receiveBufferSize);
      } catch {
        // The kernel caps the buffer (net.core.rmem_max); the default still works.
      }
      resolve(socket);
    });
  });
}

/** @param {string} host @param {number} port @returns {Promise<net.Server>} */
function bindTcp(host, port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer(onConnection);
    server.maxConnections = MAX_TCP_CONNECTIONS;
    server.once('error', (err) => {
      server.close();
      reject(
        Object.assign(new Error(describe(err, 'TCP', host, port)), {
          code: /** @type {NodeJS.ErrnoException} */ (err).code,
        }),
      );
    });
    server.listen({ host, port, exclusive: true }, () => {
      server.removeAllListeners('error');
      resolve(server);
    });
  });
}

/** @param {net.Socket} socket */
function onConnection(socket) {
  connections.add(socket);
  const address = socket.remoteAddress ?? 'unknown';
  const framer = new SyslogFramer((frame) => accept(frame, address));
  socket.on('data', (chunk) => framer.push(chunk));
  socket.on('end', () => framer.end());
  socket.on('error', () => socket.destroy());
  socket.on('close', () => connections.delete(socket));
}

async function bindPair() {
  const fixed = data.port === 'auto' ? null : data.port;
  for (let attempt = 1; ; attempt++) {
    const socket = await bindUdp(data.host, fixed ?? 0);
    const port = socket.address().port;
    try {
      tcp = await bindTcp(data.host, port);
      udp = socket;
      return port;
    } catch (err) {
      await new Promise((r) => socket.close(() => r(undefined)));
      const taken = /** @type {{code?: string}} */ (err).code === 'EADDRINUSE';
      if (fixed !== null || !taken || attempt >= PAIR_ATTEMPTS) throw err;
    }
  }
}

bindPair().then(
  (port) => {
    const socket = /** @type {dgram.Socket} */ (udp);
    socket.on('message', (msg, rinfo) => accept(msg, rinfo.address));
    socket.on('error', () => {});
    parent.postMessage({ type: 'bound', port });
  },
  (err) => parent.postMessage({ type: 'bind-error', message: /** @type {Error} */ (err).message }),
);

parent.on('message', async (/** @type {any} */ msg) => {
  if (msg.type === 'devices') useSnapshot(msg.snapshot);
  else if (msg.type === 'config') {
    if (msg.minSeverity === null) minSeverity.delete(msg.deviceId);
    else minSeverity.set(msg.deviceId, msg.minSeverity);
  } else if (msg.type === 'stop') {
    await new Promise((r) => (udp ? udp.close(() => r(undefined)) : r(undefined)));
    for (const socket of connections) socket.destroy();
    await new Promise((r) => (tcp ? tcp.close(() => r(undefined)) : r(undefined)));
    flush();
    await writer.close(3000);
    parent.postMessage({ type: 'stopped' });
    parent.close();
  }
});
