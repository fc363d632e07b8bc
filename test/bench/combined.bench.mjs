/**
 * Syslog and flows together (issues 14 and 15), loopback only: `BENCH=combined npm run bench`
 * (after `npm run build`). Both feeds share one storage writer and SQLite's one write lock, so
 * each is run at half its floor: syslog at BENCH_COMBINED_SYSLOG_RATE (default 25,000 msg/s, two
 * sender processes) and NetFlow/IPFIX at BENCH_COMBINED_FLOWS_RATE (default 10,000 records/s)
 * at the same time for BENCH_COMBINED_DURATION_S (default 60), into one appliance whose tables
 * were prefilled with BENCH_COMBINED_PREFILL rows each (default 10,000,000 syslog rows and as
 * many flows). Reports sent and stored per feed (zero loss is the bar), the syslog
 * intake-to-committed p99, the appliance's CPU seconds per 100,000 items, then the first pages
 * of GET /api/syslog/list and GET /api/netflow/list (active flows), timed in turn while both feeds
 * arrive (after the first 10 s) and BENCH_COMBINED_LIST_RUNS times each (default 20) right after.
 * Writes test/bench/results/combined-latest.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prefill as prefillFlows, send as sendFlows } from './flows.bench.mjs';
import {
  bearerToken,
  call,
  cpuSecondsOf,
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
import { prefill as prefillSyslog } from './syslog.bench.mjs';

const PREFILL = intEnv('BENCH_COMBINED_PREFILL', 10_000_000, 0, 100_000_000);
const SYSLOG_RATE = intEnv('BENCH_COMBINED_SYSLOG_RATE', 25_000, 1, 1_000_000);
const FLOWS_RATE = intEnv('BENCH_COMBINED_FLOWS_RATE', 10_000, 1, 1_000_000);
const DURATION_S = intEnv('BENCH_COMBINED_DURATION_S', 60, 1, 3600);
const LIST_RUNS = intEnv('BENCH_COMBINED_LIST_RUNS', 20, 1, 1000);

const appliance = (dataDir, port) =>
  startAppliance(dataDir, [], { APPLIANCE_SYSLOG_PORT: port, APPLIANCE_NETFLOW_PORT: port });

async function counters(url, token) {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await call('GET', `${url}/api/intake/counters`, { token });
      if (res.status !== 200) throw new Error(`GET /api/intake/counters: HTTP ${res.status}`);
      return res.json;
    } catch (err) {
      if (attempt >= 3) throw err;
      await sleep(200);
    }
  }
}

async function firstPages(url, token, route) {
  const times = [];
  for (let i = 0; i < LIST_RUNS; i++) {
    const res = await timedGet(`${url}${route}`, token);
    if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status}`);
    times.push(res.ms);
  }
  const sorted = [...times].sort((a, b) => a - b);
  return {
    p50: round(sorted[Math.floor(sorted.length / 2)], 1),
    p99: round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))], 1),
  };
}

export async function runCombinedBench() {
  const machine = machineInfo();
  log(
    `combined bench: ${machine.cpuCores} cores, node ${machine.node}; prefill ${PREFILL.toLocaleString('en')} rows each, syslog ${SYSLOG_RATE} msg/s and flows ${FLOWS_RATE} records/s for ${DURATION_S} s`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'combined-bench-'));
  const first = await appliance(dataDir, '0');
  await stopChild(first.entry);
  const file = path.join(dataDir, 'appliance.db');
  log(
    `prefilled syslog in ${round(prefillSyslog(file, PREFILL), 1)} s, flows in ${round(prefillFlows(file, PREFILL), 1)} s`,
  );

  const started = await appliance(dataDir, 'auto');
  try {
    await sleep(300);
    const portsLine = started.entry.output.find((l) => l.includes('collector ports:'));
    const ports = JSON.parse(portsLine.slice(portsLine.indexOf('{')));
    const token = await bearerToken(started.url);
    const pid = started.child.pid;
    log(
      `appliance at ${started.url}, syslog UDP ${ports.syslog.udp}, flows UDP ${ports.netflow.udp}`,
    );

    const before = await counters(started.url, token);
    const cpuBefore = cpuSecondsOf(pid);
    // While both feeds arrive: the first pages timed in turn, every 500 ms after the first 10 s
    // (the active flow list then holds a full minute of the flows being sent).
    let sending = true;
    const during = (async () => {
      const times = { syslog: [], flows: [] };
      await sleep(Math.min(10_000, (DURATION_S * 1000) / 2));
      for (let i = 0; sending && i < 10_000; i++) {
        const route = i % 2 === 0 ? '/api/syslog/list?limit=1000' : '/api/netflow/list?limit=1000';
        const res = await timedGet(`${started.url}${route}`, token);
        if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status}`);
        times[i % 2 === 0 ? 'syslog' : 'flows'].push(res.ms);
        await sleep(250);
      }
      const stats = (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        return sorted.length === 0
          ? null
          : {
              runs: sorted.length,
              p50: round(sorted[Math.floor(sorted.length / 2)], 1),
              p99: round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))], 1),
            };
      };
      return { syslogFirstPage: stats(times.syslog), flowsActiveFirstPage: stats(times.flows) };
    })();
    const [syslogSent, flowsSent] = await Promise.all([
      sendSyslog(ports.syslog.udp, SYSLOG_RATE, DURATION_S, 2),
      sendFlows(ports.netflow.udp, FLOWS_RATE, DURATION_S),
    ]);
    sending = false;
    const listsDuringIntake = await during;
    // Settle: both feeds' stored counts stop moving (at most 30 s).
    let after = await counters(started.url, token);
    for (let i = 0; i < 60; i++) {
      await sleep(500);
      const next = await counters(started.url, token);
      const still =
        next.syslog.stored === after.syslog.stored && next.flows.stored === after.flows.stored;
      after = next;
      if (still) break;
    }
    const cpu = cpuSecondsOf(pid) - cpuBefore;
    const syslogStored = after.syslog.stored - before.syslog.stored;
    const flowsStored = after.flows.stored - before.flows.stored;
    const syslog = {
      rate: SYSLOG_RATE,
      achievedRate: round(syslogSent.rate),
      sent: syslogSent.sent,
      stored: syslogStored,
      lost: syslogSent.sent - syslogStored,
      lostInKernel: syslogSent.sent - (after.syslog.received - before.syslog.received),
      droppedByWriter: after.syslog.dropped - before.syslog.dropped,
      queryableP99Ms: after.syslog.queryable_p99_ms,
    };
    const flows = {
      rate: FLOWS_RATE,
      achievedRate: round(flowsSent.rate),
      sent: flowsSent.sent,
      stored: flowsStored,
      lost: flowsSent.sent - flowsStored,
      droppedByWriter: after.flows.dropped - before.flows.dropped,
    };
    const items = syslogStored + flowsStored;
    const cpuSecondsPer100k = items > 0 ? round((cpu * 100_000) / items, 2) : null;
    log(`syslog: ${JSON.stringify(syslog)}`);
    log(`flows: ${JSON.stringify(flows)}`);
    log(`appliance CPU: ${round(cpu, 1)} s, ${cpuSecondsPer100k} s per 100,000 items`);
    const lists = {
      syslogFirstPage: await firstPages(started.url, token, '/api/syslog/list?limit=1000'),
      flowsActiveFirstPage: await firstPages(started.url, token, '/api/netflow/list?limit=1000'),
    };
    log(`first pages during intake: ${JSON.stringify(listsDuringIntake)}`);
    log(`first pages right after: ${JSON.stringify(lists)}`);
    const summary = {
      at: new Date().toISOString(),
      machine,
      loadAverage: os.loadavg(),
      prefill: PREFILL,
      durationS: DURATION_S,
      verdict: syslog.lost === 0 && flows.lost === 0 ? 'PASS' : 'MISS',
      syslog,
      flows,
      cpuSecondsPer100k,
      listsDuringIntake,
      lists,
    };
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'combined-latest.json'),
      `${JSON.stringify(summary, null, 2)}\n`,
    );
    log(`combined at half rate each: ${summary.verdict}`);
    return 0;
  } finally {
    await stopChild(started.entry);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
