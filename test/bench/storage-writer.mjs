/**
 * Storage writer micro-benchmark (not a test): rows per second through the one writer of the
 * process (appliance-core/src/platform/db/storage-writer.ts) into a real SQLite file, for a
 * 1-column and a 10-column insert, with one and with three producers, the producers either on
 * this (the API) thread or each in its own worker thread through StorageWriterClient.
 *
 *   node test/bench/storage-writer.mjs        (needs `npm run build`; about a minute)
 *
 * Each case: a fresh database file in a temp dir, a warm-up of 10 000 rows per producer (not
 * timed; producer threads are started before), then ROWS rows split evenly between the producers, written as fast as the producers' queues allow (a producer
 * pauses while its queued and in-flight writes exceed maxQueued - 1000, so nothing is dropped),
 * timed until every row is committed (flush()). Reported: rows/s, process CPU per 1000 rows (all
 * threads: producers, the writer's worker, SQLite), batches and rows per batch. The row count
 * is checked in the database and no write may be dropped, failed or lost.
 *
 * The producer threads run this same file (as workers).
 *
 * The baseline: the same rows inserted by better-sqlite3 directly on one thread, in transactions
 * of maxPending rows (what SQLite alone costs on this machine at this moment: a shared machine
 * drifts, so read the writer's figures against it). Each case runs BENCH_WRITER_ROUNDS times;
 * the round with the median rows/s is reported.
 *
 * Environment: BENCH_WRITER_ROWS (300000), BENCH_WRITER_MAX_PENDING (5000), BENCH_WRITER_FLUSH_MS (5),
 * BENCH_WRITER_ROUNDS (3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { intEnv, log, machineInfo, round, ROOT, table } from './lib.mjs';

const DIST = path.join(ROOT, 'appliance-core/dist/platform/db');
if (!fs.existsSync(path.join(DIST, 'storage-writer.client.mjs'))) {
  process.stderr.write('appliance-core/dist not found or stale: run `npm run build` first\n');
  process.exit(1);
}
const { StorageWriter, StorageWriterClient } = await import(
  pathToFileURL(path.join(DIST, 'storage-writer.js')).href
);
const { openDatabase } = await import(pathToFileURL(path.join(DIST, 'database.js')).href);

const ROWS = intEnv('BENCH_WRITER_ROWS', 300_000, 1000, 100_000_000);
const MAX_PENDING = intEnv('BENCH_WRITER_MAX_PENDING', 5000, 1, 1_000_000);
const FLUSH_MS = intEnv('BENCH_WRITER_FLUSH_MS', 5, 1, 60_000);
const ROUNDS = intEnv('BENCH_WRITER_ROUNDS', 3, 1, 100);
const MAX_QUEUED = 100_000;
const WARMUP = 10_000;
/** Bounds every wait loop (a stuck writer ends the bench instead of hanging it). */
const CASE_LIMIT_MS = 300_000;

const COLUMNS = {
  1: { ddl: 'a INTEGER NOT NULL', names: 'a' },
  10: {
    ddl: 'ts INTEGER NOT NULL, device_id INTEGER, host TEXT NOT NULL, facility INTEGER NOT NULL, severity INTEGER NOT NULL, app TEXT, pid INTEGER, latency REAL, tag TEXT, message TEXT NOT NULL',
    names: 'ts, device_id, host, facility, severity, app, pid, latency, tag, message',
  },
};

async function runCase(columns, producers, where) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writer-bench-'));
  const file = path.join(dir, 'bench.db');
  const db = openDatabase(file);
  const { ddl, names } = COLUMNS[columns];
  db.exec(`CREATE TABLE t (${ddl}) STRICT`);
  const writer = new StorageWriter(file, {
    flushMs: FLUSH_MS,
    maxPending: MAX_PENDING,
    onError: (err) => log(`  writer: ${err.message}`),
  });
  writer.define('bench.row', `INSERT INTO t (${names}) VALUES (${names.replace(/\w+/g, '?')})`);
  writer.start();
  const options = { maxQueued: MAX_QUEUED, flushMs: FLUSH_MS, postEvery: 1000 };
  const per = Math.floor(ROWS / producers);
  const deadline = Date.now() + CASE_LIMIT_MS;
  let measured;
  let threads = [];
  try {
    if (where === 'main') {
      const lanes = Array.from({ length: producers }, (_, i) => writer.producer(`p${i}`, options));
      // Warm-up: each producer writes WARMUP rows first (JIT, page cache, the worker's statements).
      await produceHere(lanes, WARMUP, columns, deadline, ROWS);
      measured = await timed(writer, () => produceHere(lanes, per, columns, deadline, 0));
    } else {
      // Each thread starts, writes its warm-up rows, and waits for the go (not timed).
      threads = Array.from({ length: producers }, (_, p) =>
        producerThread(writer, `p${p}`, options, { per, columns, first: p * per }),
      );
      await Promise.all(threads.map((t) => t.ready));
      measured = await timed(writer, async () => {
        for (const t of threads) t.go();
        await Promise.all(threads.map((t) => t.done));
        return per * producers;
      });
    }
    const stats = writer.stats();
    const { n } = db.prepare('SELECT count(*) AS n FROM t').get();
    const expected = (WARMUP + per) * producers;
    if (n !== expected || stats.dropped + stats.failed + stats.lost > 0)
      throw new Error(`expected ${expected} rows, found ${n}; stats ${JSON.stringify(stats)}`);
    return measured;
  } finally {
    await Promise.all(threads.map((t) => t.stop()));
    await writer.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A producer thread (this file, run as a worker), with promises for its warm-up and its run. */
function producerThread(writer, name, options, work) {
  const port = writer.connect(name, options);
  const thread = new Worker(new URL(import.meta.url), {
    workerData: { port, ...work },
    transferList: [port],
  });
  const failed = new Promise((_, reject) => {
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`producer thread exited (${code})`)));
  });
  failed.catch(() => undefined);
  const next = (type) =>
    Promise.race([
      new Promise((resolve) => thread.on('message', (msg) => msg.type === type && resolve(msg))),
      failed,
    ]);
  return {
    ready: next('ready'),
    done: next('done'),
    go: () => thread.postMessage('go'),
    stop: () => thread.terminate(),
  };
}

async function timed(writer, run) {
  const flushes = writer.stats().flushes;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const rows = await run();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const batches = writer.stats().flushes - flushes;
  return {
    rows,
    seconds,
    rowsPerSecond: rows / seconds,
    cpuMsPer1000: (used.user + used.system) / 1000 / (rows / 1000),
    batches,
    rowsPerBatch: rows / Math.max(1, batches),
  };
}

function row(columns, i) {
  if (columns === 1) return [i];
  return [
    1_780_000_000_000 + i,
    i % 5000,
    `host-${i % 5000}.example.test`,
    i % 24,
    i % 8,
    'sshd',
    1000 + (i % 30_000),
    (i % 1000) / 10,
    null,
    `Accepted publickey for admin from 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255} port ${i % 65_536} ssh2`,
  ];
}

/** Resolves at the producer's next commit notice. */
function nextCommit(producer) {
  return new Promise((resolve) => {
    const stop = producer.onCommit(() => {
      stop();
      resolve();
    });
  });
}

/** Writes `per` rows through each lane, in turns of 1000, pausing a lane whose queue is nearly full. */
async function produceHere(lanes, per, columns, deadline, offset) {
  const written = lanes.map(() => 0);
  while (written.some((n) => n < per)) {
    if (Date.now() > deadline) throw new Error('the writer did not keep up within the time limit');
    const full = [];
    lanes.forEach((lane, p) => {
      const { queued, inFlight } = lane.stats();
      let room = Math.min(1000, per - written[p], MAX_QUEUED - 1000 - queued - inFlight);
      if (room <= 0 && written[p] < per) full.push(lane);
      for (; room > 0; room--)
        lane.write('bench.row', row(columns, offset + p * per + written[p]++));
    });
    // A full queue waits for a commit notice (no busy loop: it would take a core from the worker).
    await (full.length === lanes.length
      ? Promise.race(full.map(nextCommit))
      : new Promise((resolve) => setImmediate(resolve)));
  }
  await Promise.all(lanes.map((lane) => lane.flush()));
  return per * lanes.length;
}

/** In a producer thread: writes `count` rows from `first` through the client, as fast as its queue allows. */
async function produceThere(client, count, columns, first) {
  const deadline = Date.now() + CASE_LIMIT_MS;
  let written = 0;
  while (written < count) {
    if (Date.now() > deadline) throw new Error('the writer did not keep up within the time limit');
    const { queued, inFlight } = client.stats();
    let room = Math.min(1000, count - written, MAX_QUEUED - 1000 - queued - inFlight);
    const full = room <= 0;
    for (; room > 0; room--) client.write('bench.row', row(columns, first + written++));
    await (full ? nextCommit(client) : new Promise((resolve) => setImmediate(resolve)));
  }
  await client.flush();
}

/** This file run as a producer thread: warm-up rows, then `per` rows on the go. */
async function producerMain() {
  const { port, per, columns, first } = workerData;
  const client = new StorageWriterClient(port);
  await produceThere(client, WARMUP, columns, ROWS + first);
  const go = new Promise((resolve) => parentPort.once('message', resolve));
  parentPort.postMessage({ type: 'ready' });
  await go;
  await produceThere(client, per, columns, first);
  parentPort.postMessage({ type: 'done', stats: client.stats() });
}

/** The baseline: better-sqlite3 directly on this thread, transactions of MAX_PENDING rows. */
function rawCase(columns) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writer-bench-'));
  const db = openDatabase(path.join(dir, 'bench.db'));
  try {
    const { ddl, names } = COLUMNS[columns];
    db.exec(`CREATE TABLE t (${ddl}) STRICT`);
    const insert = db.prepare(`INSERT INTO t (${names}) VALUES (${names.replace(/\w+/g, '?')})`);
    const batch = db.transaction((from, to) => {
      for (let i = from; i < to; i++) insert.run(row(columns, i));
    });
    batch(ROWS, ROWS + WARMUP);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let from = 0; from < ROWS; from += MAX_PENDING)
      batch(from, Math.min(ROWS, from + MAX_PENDING));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const batches = Math.ceil(ROWS / MAX_PENDING);
    return {
      rows: ROWS,
      seconds,
      rowsPerSecond: ROWS / seconds,
      cpuMsPer1000: (used.user + used.system) / 1000 / (ROWS / 1000),
      batches,
      rowsPerBatch: ROWS / batches,
    };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a case ROUNDS times; the round with the median rows/s. */
async function median(run) {
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await run());
  rounds.sort((a, b) => a.rowsPerSecond - b.rowsPerSecond);
  return rounds[Math.floor(rounds.length / 2)];
}

async function main() {
  log(
    `storage writer bench: ${ROWS} rows per case, maxPending ${MAX_PENDING}, flushMs ${FLUSH_MS}, median of ${ROUNDS} rounds`,
  );
  log(JSON.stringify({ ...machineInfo(), loadAverage: os.loadavg().map((l) => round(l, 1)) }));
  const results = [
    ['case', 'producers', 'rows', 's', 'rows/s', 'CPU ms/1k rows', 'batches', 'rows/batch'],
  ];
  const add = (label, producers, r) =>
    results.push([
      label,
      producers,
      r.rows,
      round(r.seconds, 2),
      Math.round(r.rowsPerSecond),
      round(r.cpuMsPer1000, 2),
      r.batches,
      Math.round(r.rowsPerBatch),
    ]);
  for (const columns of [1, 10]) {
    add(`${columns} col, baseline (no writer)`, '-', await median(async () => rawCase(columns)));
    for (const where of ['main', 'threads'])
      for (const producers of [1, 3])
        add(
          `${columns} col, ${where === 'main' ? 'API thread' : 'own threads'}`,
          producers,
          await median(() => runCase(columns, producers, where)),
        );
  }
  log(table(results));
  log(
    `load average after: ${os
      .loadavg()
      .map((l) => round(l, 1))
      .join(' ')}`,
  );
}

await (isMainThread ? main() : producerMain());
