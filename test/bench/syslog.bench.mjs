/**
 * Syslog intake benchmark (issue 14), loopback only: `BENCH=syslog npm run bench` (after
 * `npm run build`).
 *
 *  1. Starts the built appliance once on a fresh data dir (migrations), stops it, and fills
 *     syslog_log_latest (and its rollup) with BENCH_SYSLOG_PREFILL rows (default 10,000,000) spread
 *     over the last 24 hours, 1 in 997 carrying the word `needle`.
 *  2. Starts it again with APPLIANCE_SYSLOG_PORT=auto (an ephemeral port: other programs here may
 *     flood 5514) and reads the port from its `collector ports:` line.
 *  3. For each rate of BENCH_SYSLOG_RATES (default 25000,50000,75000,100000,125000 msg/s): other
 *     processes (syslog-sender.mjs, BENCH_SYSLOG_SENDERS of them, default 2, the rate split) send for BENCH_SYSLOG_DURATION_S (default 60) seconds while a
 *     bounded loop times GET /api/devices and POST /api/device/set (about 5 a second each); then
 *     waits for the intake to settle and compares sent with stored (GET /api/intake/counters).
 *     Stops after the first rate with loss. Reports the highest zero-loss rate, the p99 of the
 *     intake-to-committed delay the receiver measures (first message of a batch received ->
 *     its transaction committed: from then on a list returns it), and the API p99s.
 *  4. Times GET /api/syslog/list on the full table (BENCH_SYSLOG_LIST_RUNS each, default 20):
 *     first page, a severity filter, a message substring (`needle`), with the p99 and whether any
 *     answer was partial.
 *  Writes test/bench/results/syslog-latest.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../appliance-core/dist/platform/db/database.js';
import {
  bearerToken,
  call,
  intEnv,
  log,
  machineInfo,
  RESULTS_DIR,
  round,
  sendSyslog,
  sleep,
  startAppliance,
  stopChild,
  timedGet,
} from './lib.mjs';

const PREFILL = intEnv('BENCH_SYSLOG_PREFILL', 10_000_000, 0, 100_000_000);
const DURATION_S = intEnv('BENCH_SYSLOG_DURATION_S', 60, 1, 3600);
const LIST_RUNS = intEnv('BENCH_SYSLOG_LIST_RUNS', 20, 1, 1000);
const SENDERS = intEnv('BENCH_SYSLOG_SENDERS', 2, 1, 8);
const RATES = (process.env.BENCH_SYSLOG_RATES ?? '25000,50000,75000,100000,125000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0 && n <= 1_000_000);
const FLOOR = 50_000;

const p99 = (values) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))], 1);
};

const appliance = (dataDir, syslogPort) =>
  startAppliance(dataDir, [], { APPLIANCE_SYSLOG_PORT: syslogPort });

export function prefill(file, rows) {
  const db = openDatabase(file);
  const now = Date.now();
  const insert = db.prepare(
    `INSERT INTO syslog_log_latest (device_id, timestamp, facility, severity, source, message, host, sender, reported_at, malformed) VALUES (?, ?, 16, ?, 'bench', ?, 'benchhost', '127.0.0.1', NULL, 0)`,
  );
  const rollup = new Map();
  const started = Date.now();
  const chunk = 50_000;
  for (let done = 0; done < rows; done += chunk) {
    db.transaction(() => {
      for (let i = done; i < Math.min(rows, done + chunk); i++) {
        const at = now - 86_400_000 + Math.floor((i / rows) * 86_300_000);
        // Severities skewed like real traffic: mostly informational and notice, few emergencies.
        const severity = i % 1000 === 0 ? 0 : i % 100 === 0 ? 3 : i % 10 === 0 ? 4 : 6;
        insert.run(
          1,
          at,
          severity,
          `seq=${i} ${i % 997 === 0 ? 'needle ' : ''}interface Gi0/${i % 48} changed state to up`,
        );
        const key = `${at - (at % 60_000)}|${severity}`;
        rollup.set(key, (rollup.get(key) ?? 0) + 1);
      }
    })();
  }
  const up = db.prepare(
    'INSERT INTO syslog_minute_rollup (minute, device_id, severity, count) VALUES (?, 1, ?, ?) ON CONFLICT DO UPDATE SET count = count + excluded.count',
  );
  db.transaction(() => {
    for (const [key, count] of rollup) {
      const [minute, severity] = key.split('|').map(Number);
      up.run(minute, severity, count);
    }
  })();
  db.close();
  return (Date.now() - started) / 1000;
}

async function counters(url, token) {
  const res = await call('GET', `${url}/api/intake/counters`, { token });
  if (res.status !== 200)
    throw new Error(`GET /api/intake/counters: HTTP ${res.status} ${res.text}`);
  return res.json.syslog;
}

/** Times GET /api/devices and POST /api/device/set in a bounded loop until `stop()` says so. */
async function apiLoad(url, token, stop) {
  const devices = [];
  const saves = [];
  for (let i = 0; i < 100_000 && !stop(); i++) {
    const a = performance.now();
    const list = await timedGet(`${url}/api/devices`, token);
    if (list.status === 200) devices.push(performance.now() - a);
    const b = performance.now();
    const saved = await call('POST', `${url}/api/device/set`, {
      token,
      body: { id: 1, ip_address: '127.0.0.1', label: `bench ${i}`, profile: 'dash_generic' },
    });
    if (saved.status === 200) saves.push(performance.now() - b);
    await sleep(200);
  }
  return { devicesP99: p99(devices), deviceSetP99: p99(saves), samples: devices.length };
}

async function listLatency(url, token, query) {
  const times = [];
  let partial = false;
  let total = null;
  for (let i = 0; i < LIST_RUNS; i++) {
    const res = await timedGet(`${url}/api/syslog/list?${query}`, token);
    if (res.status !== 200) throw new Error(`list ${query}: HTTP ${res.status}`);
    times.push(res.ms);
    const body = JSON.parse(res.body.toString('utf8'));
    partial ||= body.partial;
    total = body.total;
  }
  return {
    p50: round([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)], 1),
    p99: p99(times),
    partial,
    total,
  };
}

export async function runSyslogBench() {
  const machine = machineInfo();
  log(
    `syslog bench: ${machine.cpuCores} cores, node ${machine.node}; prefill ${PREFILL.toLocaleString()} rows, ${DURATION_S} s per rate, rates ${RATES.join(', ')}`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'syslog-bench-'));
  const first = await appliance(dataDir, '0');
  await stopChild(first.entry);
  const fillS = prefill(path.join(dataDir, 'appliance.db'), PREFILL);
  log(`prefilled ${PREFILL.toLocaleString()} rows in ${round(fillS, 1)} s`);

  const started = await appliance(dataDir, 'auto');
  await sleep(300);
  const portsLine = started.entry.output.find((l) => l.includes('collector ports:'));
  const port = JSON.parse(portsLine.slice(portsLine.indexOf('{'))).syslog.udp;
  const token = await bearerToken(started.url);
  log(`appliance at ${started.url}, syslog on UDP ${port}`);

  const results = [];
  let best = 0;
  for (const rate of RATES) {
    const before = await counters(started.url, token);
    let sending = true;
    const load = apiLoad(started.url, token, () => !sending);
    const sent = await sendSyslog(port, rate, DURATION_S, SENDERS);
    // Settle: the writer commits within ~1 s; wait until stored stops moving (at most 30 s).
    let after = await counters(started.url, token);
    for (let i = 0; i < 60; i++) {
      await sleep(500);
      const next = await counters(started.url, token);
      if (
        next.stored + next.dropped + next.filtered === next.received &&
        next.stored === after.stored
      ) {
        after = next;
        break;
      }
      after = next;
    }
    sending = false;
    const api = await load;
    const stored = after.stored - before.stored;
    const received = after.received - before.received;
    const row = {
      rate,
      achievedRate: round(sent.rate),
      sent: sent.sent,
      received,
      stored,
      lost: sent.sent - stored,
      droppedByWriter: after.dropped - before.dropped,
      lostInKernel: sent.sent - received,
      queryableP99Ms: after.queryable_p99_ms,
      devicesP99Ms: api.devicesP99 === null ? null : round(api.devicesP99, 1),
      deviceSetP99Ms: api.deviceSetP99 === null ? null : round(api.deviceSetP99, 1),
    };
    results.push(row);
    log(JSON.stringify(row));
    if (row.lost > 0) break;
    best = Math.max(best, rate);
  }

  const lists = {
    firstPage: await listLatency(started.url, token, 'limit=1000'),
    severity: await listLatency(
      started.url,
      token,
      `filters=${encodeURIComponent('{"severity":0}')}`,
    ),
    substring: await listLatency(
      started.url,
      token,
      `filters=${encodeURIComponent('{"message":"needle"}')}`,
    ),
  };
  log(`lists on ${PREFILL.toLocaleString()}+ rows: ${JSON.stringify(lists)}`);
  await stopChild(started.entry);
  fs.rmSync(dataDir, { recursive: true, force: true });

  const summary = {
    at: new Date().toISOString(),
    machine,
    prefill: PREFILL,
    durationS: DURATION_S,
    highestZeroLossRate: best,
    floor: FLOOR,
    verdict: best >= FLOOR ? 'PASS' : 'MISS',
    rates: results,
    lists,
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(RESULTS_DIR, 'syslog-latest.json'),
    `${JSON.stringify(summary, null, 2)}\n`,
  );
  log(
    `highest zero-loss rate: ${best} msg/s for ${DURATION_S} s (floor ${FLOOR}: ${summary.verdict})`,
  );
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runSyslogBench());
