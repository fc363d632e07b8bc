/**
 * Retention bench (issue 18), loopback only: the built appliance polls BENCH_RETENTION_TRACKERS
 * latency trackers every 10 s (one device each on 127.16.0.0/14, as the pollers bench) while its
 * retention pruner deletes a month of old samples of every tracker (raw latency samples and their
 * 5-minute rollups, both set to 30 days through POST /api/setRetentionPolicy), and a bounded loop
 * requests GET /api/devices (the full list), timed to the last byte of its body.
 *
 * The old month is seeded directly into the database before the measured start:
 * BENCH_RETENTION_OLD_PER_TRACKER raw samples per tracker spread over days 31 to 60 ago, each with
 * its 5-minute rollup row (a month at the pollers' 10 s would be 259,200 rows per tracker, 5.2
 * billion for 20,000 trackers: not storable on this machine, so the month is thinned; the pruner's
 * work per batch is the same, the number of batches scales with the rows).
 *
 * The pruner runs every APPLIANCE_RETENTION_INTERVAL_S = 60 s here (first run at a random point of
 * the first minute). The window lasts BENCH_RETENTION_DURATION_S, longer while the first run has
 * not finished (until 20 s after it, at most three times the duration). Reports: rows removed and the run's duration (from the
 * appliance's log), lost latency samples in the window (slots without a reading, as the pollers
 * bench counts them), the storage writer's failed/dropped writes, and GET /api/devices p50/p99,
 * overall and while the pruner ran. Writes test/bench/results/retention-latest.json.
 *
 * Environment: BENCH_RETENTION_TRACKERS (20000), BENCH_RETENTION_OLD_PER_TRACKER (60),
 * BENCH_RETENTION_DURATION_S (240), BENCH_RETENTION_BASELINE=1 (the same run with both rows at
 * 365 days: the pruner runs and finds nothing, the figures of the same load without deletes).
 * Prerequisite: `npm run build`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../appliance-core/dist/platform/db/database.js';
import {
  ADMIN_PASSWORD,
  bearerToken,
  call,
  intEnv,
  log,
  machineInfo,
  RESULTS_DIR,
  round,
  SERVER_ENTRY,
  sleep,
  startChild,
  startFlags,
  stopChild,
  timedGet,
  waitReady,
} from './lib.mjs';

const DAY_MS = 86_400_000;

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    p50: round(percentile(sorted, 50) ?? 0, 1),
    p99: round(percentile(sorted, 99) ?? 0, 1),
    max: round(sorted.at(-1) ?? 0, 1),
  };
};

const ipOf = (prefix, i) => `${prefix[0]}.${prefix[1] + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;

function startApplianceChild(dataDir, extra = {}) {
  if (!fs.existsSync(SERVER_ENTRY))
    throw new Error('appliance-core/dist/server.js not found: run `npm run build` first');
  return startChild(
    'appliance',
    [...startFlags(), SERVER_ENTRY],
    {
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_BIND: '127.0.0.1',
      APPLIANCE_HTTPS_PORT: '0',
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
      APPLIANCE_ADMIN_PASSWORD: ADMIN_PASSWORD,
      APPLIANCE_LOG_LEVEL: 'info',
      ...extra,
    },
    /appliance listening on (https:\/\/127\.0\.0\.1:\d+)/,
  );
}

export async function runRetentionBench() {
  const settings = {
    trackers: intEnv('BENCH_RETENTION_TRACKERS', 20_000, 10, 65_000),
    oldPerTracker: intEnv('BENCH_RETENTION_OLD_PER_TRACKER', 60, 1, 10_000),
    durationS: intEnv('BENCH_RETENTION_DURATION_S', 240, 30, 3600),
    baseline: process.env.BENCH_RETENTION_BASELINE === '1',
  };
  const baseline = settings.baseline;
  const machine = machineInfo();
  log(
    `retention bench: ${machine.cpuCores} cores, load ${os.loadavg().map((l) => round(l, 1))}; ${settings.trackers} latency trackers @10 s, ${settings.oldPerTracker} old samples (+ 5-min rollups) each`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-retention-bench-'));
  let appliance = null;
  const watchdog = setTimeout(
    () => {
      process.stderr.write('retention bench: time budget exceeded, abandoning\n');
      appliance?.child.kill('SIGKILL');
      process.exit(2);
    },
    (settings.durationS + 300 + Math.ceil((settings.trackers * settings.oldPerTracker) / 20_000)) *
      1000,
  );
  try {
    // 1. First start creates the database; stop; seed trackers and the old month directly.
    appliance = await startApplianceChild(dataDir);
    await waitReady(appliance.url);
    await stopChild(appliance.entry);
    const file = path.join(dataDir, 'appliance.db');
    const db = openDatabase(file);
    const now = Date.now();
    const seedStart = Date.now();
    const ids = [];
    db.transaction(() => {
      db.prepare('UPDATE latency_trackers SET interval = 10').run();
      const device = db.prepare(
        "INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES (?, ?, 'dash_generic', ?, ?)",
      );
      const latency = db.prepare(
        'INSERT INTO latency_trackers (device_id, label, interval, timeout, lossout, created_at, updated_at) VALUES (?, ?, 10, 500, 100, ?, ?)',
      );
      for (let i = 1; i < settings.trackers; i++) {
        const id = Number(device.run(`ping-${i}`, ipOf([127, 16], i), now, now).lastInsertRowid);
        ids.push(Number(latency.run(id, `ping-${i}`, now, now).lastInsertRowid));
      }
      ids.push(
        ...db
          .prepare(
            'SELECT id FROM latency_trackers WHERE id NOT IN (SELECT value FROM json_each(?))',
          )
          .pluck()
          .all(JSON.stringify(ids)),
      );
    })();
    const sample = db.prepare(
      'INSERT OR IGNORE INTO latency_samples (tracker_id, ts, latency, loss) VALUES (?, ?, 1.5, 0)',
    );
    const rollup = db.prepare(
      "INSERT OR IGNORE INTO sample_rollups (kind, tracker_id, resolution, ts, n, sum_a, n_a, sum_b) VALUES ('latency', ?, 300000, ?, 1, 1.5, 1, 0)",
    );
    const span = 29 * DAY_MS;
    const step = Math.floor(span / settings.oldPerTracker);
    for (let from = 0; from < ids.length; from += 1000) {
      db.transaction(() => {
        for (const id of ids.slice(from, from + 1000))
          for (let k = 0; k < settings.oldPerTracker; k++) {
            const ts = now - 60 * DAY_MS + k * step + (id % 300) * 1000;
            sample.run(id, ts);
            rollup.run(id, ts - (ts % 300_000));
          }
      })();
    }
    // No prune before the window: both rows at 365 days until the API sets them at its start.
    db.prepare(
      "UPDATE retention_policies SET retention_days = 365 WHERE table_name IN ('latency_samples', 'sample_rollups_5m')",
    ).run();
    const seeded = {
      samples: db.prepare('SELECT count(*) FROM latency_samples').pluck().get(),
      rollups: db.prepare('SELECT count(*) FROM sample_rollups').pluck().get(),
      seconds: round((Date.now() - seedStart) / 1000, 1),
    };
    db.close();
    log(
      `seeded ${seeded.samples} old samples and ${seeded.rollups} rollups in ${seeded.seconds} s`,
    );

    // 2. Start with a one-minute pruner; set both rows to 30 days through the API.
    appliance = await startApplianceChild(dataDir, { APPLIANCE_RETENTION_INTERVAL_S: '60' });
    await waitReady(appliance.url);
    const started = Date.now();
    const token = await bearerToken(appliance.url);
    log('appliance ready; setting the retention policy');
    const policy = await call('GET', `${appliance.url}/api/getRetentionPolicy`, { token });
    const rows = policy.json.message;
    const idOf = (table) => rows.find((r) => r.table === table).id;
    const sizesBefore = Object.fromEntries(
      rows
        .filter((r) => ['latency_samples', 'sample_rollups_5m'].includes(r.table))
        .map((r) => [r.table, r.size]),
    );
    const set = await call('POST', `${appliance.url}/api/setRetentionPolicy`, {
      token,
      body: {
        data: [
          { id: idOf('latency_samples'), retention: baseline ? 365 : 30 },
          { id: idOf('sample_rollups_5m'), retention: baseline ? 365 : 30 },
        ],
      },
    });
    if (set.json?.status !== 201) throw new Error(`setRetentionPolicy: ${set.text}`);

    // 3. The window: from now until the pruner's first run has finished plus 20 s.
    let pruneStarted = null;
    let pruneDone = null;
    let pruneLine = null;
    appliance.child.stdout.on('data', (chunk) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.includes('retention prune started') && !pruneStarted) pruneStarted = Date.now();
        if (line.includes('retention prune finished') && pruneStarted && !pruneDone) {
          pruneDone = Date.now();
          pruneLine = JSON.parse(line);
        }
      }
    });
    log('retention policy set; measuring');
    const t0 = Date.now();
    const timings = [];
    let timeouts = 0;
    // At least durationS; longer while the pruner's first run has not finished (at most 3 times).
    const end = t0 + settings.durationS * 1000;
    const limit = t0 + 3 * settings.durationS * 1000;
    for (let i = 0; i < settings.durationS * 12 && Date.now() < limit; i++) {
      if (Date.now() > end && pruneDone && Date.now() > pruneDone + 20_000) break;
      // A request past the client's 10 s timeout counts as 10 s (and is reported), not as a failure.
      const sent = Date.now();
      const res = await timedGet(`${appliance.url}/api/devices`, token).catch((err) => {
        if (err?.name !== 'TimeoutError') throw err;
        timeouts++;
        return { status: 200, ms: Date.now() - sent };
      });
      if (res.status !== 200) throw new Error(`GET /api/devices: HTTP ${res.status}`);
      timings.push({ at: Date.now(), ms: res.ms });
      await sleep(250);
    }
    const t1 = Date.now();
    await sleep(5000);
    const after = await call('GET', `${appliance.url}/api/getRetentionPolicy`, { token });
    const sizesAfter = Object.fromEntries(
      after.json.message
        .filter((r) => ['latency_samples', 'sample_rollups_5m'].includes(r.table))
        .map((r) => [r.table, r.size]),
    );
    const writerLine = new Promise((resolve) => {
      appliance.child.stdout.on('data', (chunk) => {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line.includes('poller stats at stop')) resolve(JSON.parse(line));
      });
      setTimeout(() => resolve(null), 10_000).unref();
    });
    await stopChild(appliance.entry);
    const stop = await writerLine;

    // 4. Lost samples in the window (the pollers bench's count: slots without a reading).
    const check = openDatabase(file, { readonly: true });
    const intervalMs = 10_000;
    const series = new Map();
    for (const [id, ts] of check
      .prepare(
        'SELECT tracker_id, ts FROM latency_samples WHERE ts >= ? AND ts < ? ORDER BY tracker_id, ts',
      )
      .raw(true)
      .iterate(t0, t1 + 1000)) {
      const s = series.get(id) ?? { n: 0, first: ts, last: ts };
      s.n++;
      s.last = ts;
      series.set(id, s);
    }
    let lost = 0;
    const windowSlots = Math.floor((t1 - t0) / intervalMs);
    for (const id of ids) {
      const s = series.get(id);
      if (!s) {
        lost += windowSlots;
        continue;
      }
      lost += Math.max(0, Math.round((s.last - s.first) / intervalMs) + 1 - s.n);
      lost +=
        Math.floor(Math.max(0, s.first - t0 - 1000) / intervalMs) +
        Math.floor(Math.max(0, t1 - s.last - 1000) / intervalMs);
    }
    const oldLeft = check
      .prepare('SELECT count(*) FROM latency_samples WHERE ts < ?')
      .pluck()
      .get(started - 30 * DAY_MS);
    check.close();

    const removed = pruneLine?.removed ?? [];
    const run = (table) => removed.find((r) => r.table === table) ?? null;
    const pruneMs = pruneLine?.ms ?? null;
    const during = timings.filter(
      (t) => pruneStarted && t.at >= pruneStarted && t.at <= (pruneDone ?? Infinity),
    );
    const result = {
      when: new Date().toISOString(),
      machine,
      loadAverage: os.loadavg().map((l) => round(l, 2)),
      settings,
      seeded,
      prune: {
        startedAfterS: pruneStarted ? round((pruneStarted - t0) / 1000, 1) : null,
        finished: pruneDone !== null,
        latency_samples: run('latency_samples'),
        sample_rollups_5m: run('sample_rollups_5m'),
        totalMs: pruneMs,
        oldSamplesLeft: oldLeft,
        sizesBefore,
        sizesAfter,
      },
      window: { seconds: round((t1 - t0) / 1000, 1), slotsPerTracker: windowSlots },
      samples: { trackers: ids.length, lost },
      writer: stop?.writer ?? null,
      api: {
        timeouts,
        all: stats(timings.map((t) => t.ms)),
        duringPrune: stats(during.map((t) => t.ms)),
      },
    };
    log(`prune: ${JSON.stringify(result.prune)}`);
    log(`samples: ${ids.length} trackers, ${windowSlots} slots each, lost ${lost}`);
    log(`writer: ${JSON.stringify(result.writer)}`);
    log(
      `GET /api/devices: all p50 ${result.api.all.p50} / p99 ${result.api.all.p99} ms (${result.api.all.requests}); during the prune p50 ${result.api.duringPrune.p50} / p99 ${result.api.duringPrune.p99} ms (${result.api.duringPrune.requests})`,
    );
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'retention-latest.json'),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`retention bench FAILED: ${err?.stack ?? err}\n`);
    for (const line of appliance?.entry.output
      .filter((l) => l.includes('"level":50'))
      .slice(0, 3) ?? [])
      process.stderr.write(`appliance error: ${line.slice(0, 800)}\n`);
    return 1;
  } finally {
    clearTimeout(watchdog);
    if (appliance && !appliance.entry.exited) await stopChild(appliance.entry);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runRetentionBench());
