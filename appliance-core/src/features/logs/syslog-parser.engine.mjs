// @ts-check
/**
 * The syslog parse thread (started by the receiver thread, syslog-receiver.engine.mjs): takes the
 * raw datagrams and TCP frames the receiver batched (one transferred buffer per batch, never one
 * message per datagram), decodes and parses each (syslog-message.rules.mjs), attributes the sender
 * to a device, applies the device's access config, and hands rows to the storage writer through
 * its own producer client, in atomic groups that carry the rows and the per-minute severity rollup
 * that counts them (aggregated here: one upsert per minute x device x severity per group), so the
 * summary never counts a row that is not stored, nor misses one that is.
 *
 * Invariants:
 * - Never blocks on the database: the writer's client queues (up to the feed's own limit) and
 *   posts to the writer's worker; beyond the limit a whole group is dropped and counted
 *   (`dropped`), memory stays bounded.
 * - Every frame of a batch becomes exactly one of: stored, dropped, filtered. Malformed input is
 *   stored raw, never dropped for being malformed. This thread writes the counters STORED,
 *   DROPPED, FILTERED and MALFORMED of the shared array (the receiver writes RECEIVED and the
 *   batches it drops itself).
 * - A batch's slot (shared memory the receiver filled) is freed once its frames are parsed: the
 *   receiver's bound on what it has handed over and this thread has not parsed yet.
 *
 * Messages: receiver -> parser {type:'batch', slot, count, addresses}
 * | {type:'devices', snapshot} | {type:'config', deviceId, minSeverity} | {type:'stop'};
 * parser -> receiver {type:'delay', ms} | {type:'stopped'}.
 * A slot of the shared buffers: its bytes hold the frames back to back; its metadata holds, per
 * frame, its end offset, its receipt time (UTC ms) and the index of its sender in `addresses`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StorageWriterClient } from '../../platform/db/storage-writer.client.mjs';
import { parseSyslog } from './syslog-message.rules.mjs';

/** Rows per multi-row INSERT, largest first (logs.writes.ts defines a statement for each). */
const INSERT_SIZES = /** @type {const} */ ([
  [128, 'logs.syslog.insert-128'],
  [32, 'logs.syslog.insert-many'],
  [1, 'logs.syslog.insert'],
]);
const COLUMNS = 10;
const META_FIELDS = 3;

const parent = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {{writerPort: import('node:worker_threads').MessagePort, counters: SharedArrayBuffer, slots: {bytes: SharedArrayBuffer, meta: SharedArrayBuffer, state: SharedArrayBuffer, slotBytes: number, slotFrames: number}, flushMs: number, batchRows: number, snapshot: {version: number, entries: {id: number, ip: string}[]}, configs: [number, number][]}} */
const data = workerData;
const counters = new Float64Array(data.counters);
const { slotBytes, slotFrames } = data.slots;
const state = new Int32Array(data.slots.state);
// Index of each counter in the shared array (syslog.engine.ts reads them in this order).
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

/** The device key of a sender address (IPv4-mapped IPv6 is its IPv4), as ip-map.cache.ts. */
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
/** minute|device|severity -> count, for the rows of the open group. */
/** @type {Map<string, number>} */
let rollup = new Map();
let firstAt = 0;
/** @type {NodeJS.Timeout | null} */
let timer = null;

/**
 * Parses one batch from the receiver (the frames of one slot), then frees the slot.
 * @param {{slot: number, count: number, addresses: string[]}} batch
 */
function take(batch) {
  const { slot, addresses, count } = batch;
  const buf = Buffer.from(data.slots.bytes, slot * slotBytes, slotBytes);
  const meta = new Float64Array(
    data.slots.meta,
    slot * slotFrames * META_FIELDS * 8,
    slotFrames * META_FIELDS,
  );
  // Per sender of the batch: its device (undefined: unknown) and that device's min_severity.
  const devices = addresses.map(deviceOf);
  const mins = devices.map((d) => (d === undefined ? undefined : minSeverity.get(d)));
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = meta[i * META_FIELDS] ?? 0;
    const at = meta[i * META_FIELDS + 1] ?? 0;
    const who = meta[i * META_FIELDS + 2] ?? 0;
    const address = addresses[who] ?? 'unknown';
    const record = parseSyslog(buf.toString('utf8', start, end), address, at);
    start = end;
    const min = mins[who];
    if (min !== undefined && record.severity > min) {
      counters[FILTERED]++;
      continue;
    }
    const deviceId = devices[who];
    if (record.malformed) counters[MALFORMED]++;
    params.push(
      deviceId ?? null,
      at,
      record.facility,
      record.severity,
      record.source,
      record.message,
      record.host,
      address,
      record.reportedAt,
      record.malformed ? 1 : 0,
    );
    const key = `${at - (at % 60_000)}|${deviceId ?? 0}|${record.severity}`;
    rollup.set(key, (rollup.get(key) ?? 0) + 1);
    if (rows++ === 0) {
      firstAt = at;
      timer = setTimeout(flush, data.flushMs);
    }
    if (rows >= data.batchRows) flush();
  }
  Atomics.store(state, slot, 0);
}

function flush() {
  if (timer) clearTimeout(timer);
  timer = null;
  if (rows === 0) return;
  /** @type {{statement: string, params: (number | string | null)[]}[]} */
  const ops = [];
  let r = 0;
  for (const [size, statement] of INSERT_SIZES)
    for (; r + size <= rows; r += size)
      ops.push({ statement, params: params.slice(r * COLUMNS, (r + size) * COLUMNS) });
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

parent.on('message', async (/** @type {any} */ msg) => {
  if (msg.type === 'batch') take(msg);
  else if (msg.type === 'devices') useSnapshot(msg.snapshot);
  else if (msg.type === 'config') {
    if (msg.minSeverity === null) minSeverity.delete(msg.deviceId);
    else minSeverity.set(msg.deviceId, msg.minSeverity);
  } else if (msg.type === 'stop') {
    flush();
    await writer.close(3000);
    parent.postMessage({ type: 'stopped' });
    parent.close();
  }
});
