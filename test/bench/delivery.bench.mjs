/**
 * Alert delivery benchmark (issue 17), loopback only: `BENCH=delivery npm run bench` (after
 * `npm run build`; about 20 s).
 *
 * The persisted queue (appliance-core/dist/features/alerts/delivery/delivery.engine.js) on a
 * fresh SQLite file, started as the appliance starts it, delivering webhooks to an HTTP receiver
 * in this process on 127.0.0.1 (allowlisted through the outlet policy, as APPLIANCE_OUTLET_ALLOW
 * would). Measured:
 *  1. Latency: BENCH_DELIVERY_LATENCY_N (default 300) notifications enqueued one at a time, each
 *     after the previous one arrived: enqueue (row committed) -> request received, p50/p99/max.
 *  2. Throughput: BENCH_DELIVERY_N (default 3000) notifications enqueued at once, spread over
 *     BENCH_DELIVERY_OUTLETS outlets (default 1 and 8): time until every row is `sent`,
 *     deliveries per second and process CPU per delivery (this process runs the receiver too).
 *  Every delivery must arrive exactly once and every row end `sent`; otherwise the run fails.
 *  Writes test/bench/results/delivery-latest.json.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { intEnv, log, machineInfo, RESULTS_DIR, ROOT, round, table } from './lib.mjs';

const DIST = path.join(ROOT, 'appliance-core/dist');
if (!fs.existsSync(path.join(DIST, 'features/alerts/delivery/delivery.engine.js'))) {
  process.stderr.write('appliance-core/dist not found or stale: run `npm run build` first\n');
  process.exit(1);
}
const { openDatabase } = await import(path.join(DIST, 'platform/db/database.js'));
const { migrate } = await import(path.join(DIST, 'platform/db/migrate.js'));
const { SecretBox } = await import(path.join(DIST, 'platform/security/secret-box.js'));
const { outletPolicy } = await import(path.join(DIST, 'platform/net/outbound.js'));
const { DeliveryEngine } = await import(
  path.join(DIST, 'features/alerts/delivery/delivery.engine.js')
);

const LATENCY_N = intEnv('BENCH_DELIVERY_LATENCY_N', 300, 10, 100_000);
const N = intEnv('BENCH_DELIVERY_N', 3000, 10, 1_000_000);
const OUTLET_COUNTS = (process.env.BENCH_DELIVERY_OUTLETS ?? '1,8').split(',').map(Number);
const BUDGET_MS = 120_000;

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function receiver() {
  const arrivals = new Map(); // subject -> hrtime ms
  let count = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const at = performance.now();
      count++;
      const subject = JSON.parse(body).subject;
      if (arrivals.has(subject)) arrivals.set(`${subject}#dup${count}`, at);
      else arrivals.set(subject, at);
      res.end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    arrivals,
    count: () => count,
    close: () => new Promise((r) => server.close(r)),
  };
}

function engineOn(dir) {
  const db = openDatabase(path.join(dir, 'appliance.db'));
  migrate(db, Date.now());
  const engine = new DeliveryEngine({
    db,
    clock: { now: () => Date.now() },
    secrets: new SecretBox(crypto.randomBytes(32)),
    log: pino({ level: 'silent' }),
    policy: outletPolicy(['127.0.0.1']),
    relay: () => null,
    backlogCap: 1_000_000,
    concurrency: 8,
  });
  return { db, engine };
}

const note = (subject) => ({
  occurrenceId: null,
  alertLabel: 'bench',
  severity: 3,
  subject,
  text: 'x'.repeat(200),
  html: null,
  variables: {},
});
const outlet = (id, url) => ({
  id,
  type: 'webhook',
  name: `bench-${id}`,
  config: { url },
  rate_limit_per_min: null,
});

async function waitFor(check, what) {
  const deadline = Date.now() + BUDGET_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export async function runDeliveryBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-delivery-'));
  const r = await receiver();
  const url = `http://127.0.0.1:${r.port}/hook`;
  const results = { machine: machineInfo(), latency: null, throughput: [] };
  try {
    // 1. Latency, one at a time.
    {
      const { db, engine } = engineOn(dir);
      await engine.start();
      const latencies = [];
      for (let i = 0; i < LATENCY_N; i++) {
        const subject = `lat-${i}`;
        const t0 = performance.now();
        engine.enqueue(outlet(1, url), note(subject));
        await waitFor(() => r.arrivals.has(subject), subject);
        latencies.push(r.arrivals.get(subject) - t0);
      }
      await engine.stop();
      db.close();
      latencies.sort((a, b) => a - b);
      results.latency = {
        n: LATENCY_N,
        p50_ms: round(percentile(latencies, 50), 2),
        p99_ms: round(percentile(latencies, 99), 2),
        max_ms: round(latencies.at(-1), 2),
      };
    }
    // 2. Throughput, a burst over 1 and over several outlets.
    for (const outlets of OUTLET_COUNTS) {
      const caseDir = fs.mkdtempSync(path.join(dir, `t${outlets}-`));
      const { db, engine } = engineOn(caseDir);
      await engine.start();
      const before = r.count();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < N; i++)
        engine.enqueue(outlet(1 + (i % outlets), url), note(`burst-${outlets}-${i}`));
      const enqueueMs = performance.now() - t0;
      await waitFor(() => r.count() - before >= N, `burst of ${N} over ${outlets}`);
      await waitFor(
        () =>
          db.prepare(`SELECT count(*) AS n FROM alert_deliveries WHERE status = 'sent'`).get().n ===
          N,
        'rows sent',
      );
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      await engine.stop();
      const dups = [...r.arrivals.keys()].filter((k) => k.includes('#dup')).length;
      if (dups > 0) throw new Error(`${dups} deliveries arrived twice`);
      db.close();
      results.throughput.push({
        outlets,
        n: N,
        enqueue_us_each: round((enqueueMs * 1000) / N, 1),
        seconds: round(ms / 1000, 2),
        per_second: round(N / (ms / 1000)),
        cpu_us_per_delivery: round((cpu.user + cpu.system) / N),
      });
    }
  } finally {
    await r.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  log(
    `alert delivery, webhook to a loopback receiver (${os.cpus().length} CPUs, Node ${process.versions.node})`,
  );
  log(
    `latency, one at a time (enqueue -> received), n=${results.latency.n}: p50 ${results.latency.p50_ms} ms, p99 ${results.latency.p99_ms} ms, max ${results.latency.max_ms} ms`,
  );
  log(
    table([
      ['outlets', 'deliveries', 'enqueue µs each', 'seconds', 'deliveries/s', 'CPU µs/delivery'],
      ...results.throughput.map((t) => [
        t.outlets,
        t.n,
        t.enqueue_us_each,
        t.seconds,
        t.per_second,
        t.cpu_us_per_delivery,
      ]),
    ]),
  );
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(RESULTS_DIR, 'delivery-latest.json'),
    `${JSON.stringify(results, null, 2)}\n`,
  );
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runDeliveryBench());
