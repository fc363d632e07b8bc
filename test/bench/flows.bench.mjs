/**
 * Flow intake benchmark (issue 15), loopback only: `BENCH=flows npm run bench` (after
 * `npm run build`).
 *
 *  1. Starts the built appliance once on a fresh data dir (migrations), stops it, and fills
 *     flows_latest with BENCH_FLOWS_PREFILL flows (default 10,000,000) over the last 24 hours and
 *     flow_conversations with one row per 50 of them (the rollup the aggregated list reads).
 *  2. Starts it again with APPLIANCE_NETFLOW_PORT=auto and reads the port from its
 *     `collector ports:` line.
 *  3. For each rate of BENCH_FLOWS_RATES (records/s; default 10000,20000,30000,50000,75000) a
 *     sender process (flows-sender.mjs: IPFIX and v9 datagrams in turn, 30 records each) sends for
 *     BENCH_FLOWS_DURATION_S (default 60) seconds; after the intake settles, records sent are
 *     compared with records stored (GET /api/intake/counters), and the appliance's CPU time over
 *     the step gives CPU seconds per 100k records. Stops after the first rate with loss.
 *  4. Times GET /api/netflow/list (active flows; a 24-hour window, first page),
 *     GET /api/aggnetflow/list (sort=bytes) and GET /api/netflow/top (24 h), BENCH_FLOWS_LIST_RUNS
 *     each (default 20), on the filled store.
 *  Writes test/bench/results/flows-latest.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../appliance-core/dist/platform/db/database.js';
import {
  bearerToken,
  call,
  cpuSecondsOf,
  HERE,
  intEnv,
  log,
  machineInfo,
  RESULTS_DIR,
  round,
  sleep,
  startAppliance,
  stopChild,
  timedGet,
} from './lib.mjs';

const PREFILL = intEnv('BENCH_FLOWS_PREFILL', 10_000_000, 0, 100_000_000);
const DURATION_S = intEnv('BENCH_FLOWS_DURATION_S', 60, 1, 3600);
const LIST_RUNS = intEnv('BENCH_FLOWS_LIST_RUNS', 20, 1, 1000);
const RATES = (process.env.BENCH_FLOWS_RATES ?? '10000,20000,30000,50000,75000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0 && n <= 1_000_000);
const FLOOR = 20_000;
const GOAL = 50_000;

const p99 = (values) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))], 1);
};

const appliance = (dataDir, netflowPort) =>
  startAppliance(dataDir, [], { APPLIANCE_NETFLOW_PORT: netflowPort });

export function prefill(file, rows) {
  const db = openDatabase(file);
  const now = Date.now();
  const insert = db.prepare(
    `INSERT INTO flows_latest (start_time, end_time, src_ip, src_port, dst_ip, dst_port, protocol, bytes, packets, flow_src, vlan, in_iface, out_iface, src_id, src_host, src_profile, dst_id, dst_host, dst_profile, received_at) VALUES (?, ?, ?, ?, ?, 443, 6, ?, ?, '127.0.0.1', NULL, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL, ?)`,
  );
  const conversation = db.prepare(
    `INSERT OR IGNORE INTO flow_conversations (hour, src_ip, dst_ip, dst_port, protocol, flow_src, vlan, in_iface, out_iface, src_ports, bytes, packets, flows, start_time, end_time) VALUES (?, ?, ?, 443, 6, '127.0.0.1', 0, 1, 2, '[1024]', ?, ?, 50, ?, ?)`,
  );
  const started = Date.now();
  const chunk = 50_000;
  for (let done = 0; done < rows; done += chunk)
    db.transaction(() => {
      for (let i = done; i < Math.min(rows, done + chunk); i++) {
        const end = now - 86_400_000 + Math.floor((i / rows) * 86_300_000);
        const src = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        const dst = `172.16.${(i >> 8) % 16}.${i % 251}`;
        const bytes = 64 * (1 + ((i * 7919) % 100_003));
        insert.run(end - 5000, end, src, 1024 + (i % 60000), dst, bytes, 1 + (i % 50), end);
        if (i % 50 === 0)
          conversation.run(end - (end % 3_600_000), src, dst, bytes * 50, 500, end - 5000, end);
      }
    })();
  db.close();
  return (Date.now() - started) / 1000;
}

async function counters(url, token) {
  // A keep-alive connection idle through a sending step may be closed under us: retry (bounded).
  let res;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await call('GET', `${url}/api/intake/counters`, { token });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
      await sleep(200);
    }
  }
  if (res.status !== 200)
    throw new Error(`GET /api/intake/counters: HTTP ${res.status} ${res.text}`);
  return res.json.flows;
}

export function send(port, rate, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(HERE, 'flows-sender.mjs'), String(port), String(rate), String(seconds)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim()))
        : reject(new Error(`sender exited with ${code}`)),
    );
  });
}

async function listLatency(url, token, route, query) {
  const times = [];
  let total = null;
  for (let i = 0; i < LIST_RUNS; i++) {
    const res = await timedGet(`${url}${route}?${query}`, token);
    if (res.status !== 200) throw new Error(`${route} ${query}: HTTP ${res.status}`);
    times.push(res.ms);
    total = JSON.parse(res.body.toString('utf8')).total ?? null;
  }
  return {
    p50: round([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)], 1),
    p99: p99(times),
    total,
  };
}

export async function runFlowsBench() {
  const machine = machineInfo();
  log(
    `flows bench: ${machine.cpuCores} cores, node ${machine.node}; prefill ${PREFILL.toLocaleString()} flows, ${DURATION_S} s per rate, rates ${RATES.join(', ')}`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flows-bench-'));
  const first = await appliance(dataDir, '0');
  await stopChild(first.entry);
  const fillS = prefill(path.join(dataDir, 'appliance.db'), PREFILL);
  log(`prefilled ${PREFILL.toLocaleString()} flows in ${round(fillS, 1)} s`);

  const started = await appliance(dataDir, 'auto');
  await sleep(300);
  const portsLine = started.entry.output.find((l) => l.includes('collector ports:'));
  const port = JSON.parse(portsLine.slice(portsLine.indexOf('{'))).netflow.udp;
  const token = await bearerToken(started.url);
  const pid = started.child.pid;
  log(`appliance at ${started.url}, NetFlow/IPFIX on UDP ${port}`);

  const results = [];
  let best = 0;
  let lists;
  try {
    for (const rate of RATES) {
      const before = await counters(started.url, token);
      const cpuBefore = cpuSecondsOf(pid);
      const sent = await send(port, rate, DURATION_S);
      let after = await counters(started.url, token);
      for (let i = 0; i < 60; i++) {
        await sleep(500);
        const next = await counters(started.url, token);
        const settled =
          next.stored + next.dropped === next.received && next.stored === after.stored;
        after = next;
        if (settled) break;
      }
      const cpu = cpuSecondsOf(pid) - cpuBefore;
      const stored = after.stored - before.stored;
      const row = {
        rate,
        achievedRate: round(sent.rate),
        sent: sent.sent,
        datagrams: sent.datagrams,
        decoded: after.received - before.received,
        stored,
        lost: sent.sent - stored,
        droppedByWriter: after.dropped - before.dropped,
        malformed: after.malformed - before.malformed,
        cpuSecondsPer100k: stored > 0 ? round((cpu * 100_000) / stored, 2) : null,
      };
      results.push(row);
      log(JSON.stringify(row));
      if (row.lost > 0) break;
      best = Math.max(best, rate);
    }

    lists = {
      active: await listLatency(started.url, token, '/api/netflow/list', 'limit=1000'),
      window24h: await listLatency(started.url, token, '/api/netflow/list', 'hours=24&limit=1000'),
      aggregatedByBytes: await listLatency(
        started.url,
        token,
        '/api/aggnetflow/list',
        'hours=24&sort=bytes&limit=1000',
      ),
      top24h: await listLatency(started.url, token, '/api/netflow/top', 'hours=24'),
    };
    log(`lists on ${PREFILL.toLocaleString()}+ flows: ${JSON.stringify(lists)}`);
  } catch (err) {
    log(
      `flows bench failed; the appliance's last output:\n${started.entry.output.slice(-30).join('\n')}`,
    );
    log(`appliance exit: ${JSON.stringify(started.entry.exited)}`);
    throw err;
  } finally {
    await stopChild(started.entry);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });

  const summary = {
    at: new Date().toISOString(),
    machine,
    prefill: PREFILL,
    durationS: DURATION_S,
    highestZeroLossRate: best,
    floor: FLOOR,
    goal: GOAL,
    verdict: best >= FLOOR ? 'PASS' : 'MISS',
    rates: results,
    lists,
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(RESULTS_DIR, 'flows-latest.json'),
    `${JSON.stringify(summary, null, 2)}\n`,
  );
  log(
    `highest zero-loss rate: ${best} records/s for ${DURATION_S} s (floor ${FLOOR}: ${summary.verdict})`,
  );
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runFlowsBench());
