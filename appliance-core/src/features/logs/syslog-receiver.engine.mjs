// @ts-check
/**
 * The syslog receiver's worker thread (started by syslog.engine.ts): binds the collector's UDP
 * and TCP sockets, frames TCP streams, and copies every datagram and frame, with its receipt time
 * and sender, into the current batch: a slot of shared memory holding the frames back to back and
 * their metadata, handed to the parse thread (syslog-parser.engine.mjs, started here) by one
 * small message every FLUSH_MS or when full (never one message per datagram, never a buffer
 * allocated or copied per batch). Receiving is all this thread does, so a flood finds the
 * socket read as fast as one thread can, and decoding, parsing, attribution, access config and
 * the writes run in parallel on the parse thread (which owns the storage writer's client).
 *
 * Invariants:
 * - Never blocks on the database, never grows without bound: batches live in SLOTS fixed slots
 *   of shared memory (about 9.5 MB in all; SLOT_FRAMES frames each, 65,536 in all); a slot is
 *   freed by the parse thread once parsed. With every slot taken, frames are dropped and
 *   counted `dropped`, the sockets keep reading.
 * - Every datagram or TCP frame becomes exactly one of: stored, dropped (here, or by the writer's
 *   queue limit, or lost with the writer), filtered. Counters live in a SharedArrayBuffer the main
 *   thread reads synchronously: this thread writes RECEIVED (and DROPPED for its own drops), the
 *   parse thread the others; `received = stored + dropped + filtered + pending`.
 * - Sockets are bound here (a socket cannot move between threads); a bind failure is posted as
 *   one line naming protocol, address and port (the boot contract: a busy port ends the process).
 *   With port `auto`, TCP takes the number UDP got, retried on a new pair (PAIR_ATTEMPTS), as
 *   platform/net/collector-ports.ts does for the main thread.
 * - The parse thread ending (never expected: input cannot throw) ends this thread too, so the
 *   engine on the main thread starts both again.
 *
 * Messages: main -> receiver {type:'devices', snapshot} | {type:'config', deviceId, minSeverity}
 * (both relayed to the parse thread) | {type:'stop'}; receiver -> main {type:'bound', port,
 * receiveBuffer} | {type:'bind-error', message} | {type:'stopped'} | {type:'delay', ms}
 * (intake-to-committed of each group, relayed from the parse thread, for the metrics).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { SyslogFramer } from './syslog-message.rules.mjs';

const PAIR_ATTEMPTS = 8;
const MAX_TCP_CONNECTIONS = 256;
/** Batch slots shared with the parse thread (a frame is at most 64 KB: UDP, or a TCP frame cut). */
const SLOTS = 32;
const SLOT_BYTES = 256 * 1024;
/** Frames per slot. */
const SLOT_FRAMES = 2048;
/** Per frame in a slot's metadata: end offset in the slot's bytes, receipt time, sender index. */
const META_FIELDS = 3;
/** A batch is handed over this long after its first frame at the latest (ms). */
const FLUSH_MS = 20;

const parent = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {{host: string, port: number | 'auto', writerPort: import('node:worker_threads').MessagePort, counters: SharedArrayBuffer, flushMs: number, batchRows: number, receiveBufferSize: number, snapshot: {version: number, entries: {id: number, ip: string}[]}, configs: [number, number][]}} */
const data = workerData;
const counters = new Float64Array(data.counters);
// Index of each counter in the shared array (syslog.engine.ts reads them in this order).
const RECEIVED = 0;
const DROPPED = 2;
// The slots: frames back to back, per-frame metadata, and each slot's state (0 free, 1 taken:
// filled here or waiting for / being parsed by the parse thread, which frees it). No buffer is
// allocated or transferred per batch: a batch is one small message naming its slot.
const slotBytes = new SharedArrayBuffer(SLOTS * SLOT_BYTES);
const slotMeta = new SharedArrayBuffer(SLOTS * SLOT_FRAMES * META_FIELDS * 8);
const slotState = new SharedArrayBuffer(SLOTS * 4);
const state = new Int32Array(slotState);

const parser = new Worker(new URL('./syslog-parser.engine.mjs', import.meta.url), {
  workerData: {
    writerPort: data.writerPort,
    counters: data.counters,
    slots: {
      bytes: slotBytes,
      meta: slotMeta,
      state: slotState,
      slotBytes: SLOT_BYTES,
      slotFrames: SLOT_FRAMES,
    },
    flushMs: data.flushMs,
    batchRows: data.batchRows,
    snapshot: data.snapshot,
    configs: data.configs,
  },
  transferList: [data.writerPort],
});
/** @type {(() => void) | null} */
let onParserStopped = null;
parser.on('error', (err) => {
  // A bug, not input: end this thread too so the engine restarts both.
  console.error(`syslog parse thread failed: ${err.message}`);
  process.exit(1);
});
parser.on('exit', () => {
  if (onParserStopped) onParserStopped();
  else process.exit(1);
});
parser.on('message', (/** @type {any} */ msg) => {
  if (msg.type === 'delay') parent.postMessage(msg);
  else if (msg.type === 'stopped') onParserStopped?.();
});

// --- batching ------------------------------------------------------------------------------
/** The slot being filled (-1: none), the next one to take (slots are parsed in order). */
let slot = -1;
let next = 0;
/** @type {Uint8Array} */
let bytes = new Uint8Array(0);
/** @type {Float64Array} */
let meta = new Float64Array(0);
let used = 0;
let count = 0;
/** @type {string[]} */
let addresses = [];
/** @type {Map<string, number>} */
let addressIndex = new Map();
/** @type {NodeJS.Timeout | null} */
let timer = null;

/** Takes the next slot when the parse thread has freed it; false when every slot is taken. */
function take() {
  if (Atomics.load(state, next) !== 0) return false;
  slot = next;
  next = (next + 1) % SLOTS;
  Atomics.store(state, slot, 1);
  bytes = new Uint8Array(slotBytes, slot * SLOT_BYTES, SLOT_BYTES);
  meta = new Float64Array(
    slotMeta,
    slot * SLOT_FRAMES * META_FIELDS * 8,
    SLOT_FRAMES * META_FIELDS,
  );
  return true;
}

/**
 * Copies one frame into the open batch; with every slot taken (the parse thread is that far
 * behind), the frame is dropped and counted.
 * @param {Uint8Array} frame @param {string} address
 */
function accept(frame, address) {
  counters[RECEIVED]++;
  if (slot !== -1 && (used + frame.length > SLOT_BYTES || count === SLOT_FRAMES)) handOver();
  if (slot === -1 && !take()) {
    counters[DROPPED]++;
    return;
  }
  bytes.set(frame, used);
  used += frame.length;
  let who = addressIndex.get(address);
  if (who === undefined) {
    who = addresses.length;
    addresses.push(address);
    addressIndex.set(address, who);
  }
  const m = count * META_FIELDS;
  meta[m] = used;
  meta[m + 1] = Date.now();
  meta[m + 2] = who;
  if (count++ === 0) timer = setTimeout(handOver, FLUSH_MS);
}

/** Hands the open batch to the parse thread: one small message naming its slot. */
function handOver() {
  if (timer) clearTimeout(timer);
  timer = null;
  if (slot === -1) return;
  if (count > 0) parser.postMessage({ type: 'batch', slot, count, addresses });
  else Atomics.store(state, slot, 0);
  slot = -1;
  used = 0;
  count = 0;
  addresses = [];
  addressIndex = new Map();
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
    let receiveBuffer = null;
    try {
      receiveBuffer = socket.getRecvBufferSize();
    } catch {
      // Not readable on this platform: reported as null.
    }
    parent.postMessage({ type: 'bound', port, receiveBuffer });
  },
  (err) => parent.postMessage({ type: 'bind-error', message: /** @type {Error} */ (err).message }),
);

parent.on('message', async (/** @type {any} */ msg) => {
  if (msg.type === 'devices' || msg.type === 'config') parser.postMessage(msg);
  else if (msg.type === 'stop') {
    await new Promise((r) => (udp ? udp.close(() => r(undefined)) : r(undefined)));
    for (const socket of connections) socket.destroy();
    await new Promise((r) => (tcp ? tcp.close(() => r(undefined)) : r(undefined)));
    handOver();
    await new Promise((resolve) => {
      onParserStopped = () => resolve(undefined);
      parser.postMessage({ type: 'stop' });
    });
    parent.postMessage({ type: 'stopped' });
    parent.close();
  }
});
