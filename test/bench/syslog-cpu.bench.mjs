/**
 * Syslog intake CPU per datagram at a fixed rate (issue 14), loopback only:
 * `BENCH=syslog-cpu npm run bench` (after `npm run build`).
 *
 * A ceiling moves with the machine's load; CPU time per datagram at a fixed rate moves much less,
 * so this is the A/B figure for changes to the intake path. Starts the built appliance on a fresh
 * data dir with APPLIANCE_SYSLOG_PORT=auto, sends BENCH_SYSLOG_CPU_RATE msg/s (default 8,000) for
 * BENCH_SYSLOG_CPU_DURATION_S (default 15) from one sender process (syslog-sender.mjs), waits
 * until the intake settles, and reports:
 *  - the appliance's CPU time (user + system, all threads) per datagram received, in µs, minus
 *    its idle CPU over the same time (measured before the run);
 *  - the same per thread (from /proc/<pid>/task/<tid>/stat), the busiest threads first (Node 20
 *    names every thread `node`: with the intake busy, they are the receiver, the parse thread and
 *    the storage writer's worker, in that order);
 *  - sent, received, stored, dropped, lost in the kernel, and the load average.
 * Writes test/bench/results/syslog-cpu-latest.json. BENCH_CPU_PROF=1 runs the appliance under
 * `node --cpu-prof` (one profile per thread in test/bench/results/profiles/; summarise them with
 * test/bench/profile-summary.mjs).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import {
  ADMIN_PASSWORD,
  bearerToken,
  call,
  HERE,
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
} from './lib.mjs';

const RATE = intEnv('BENCH_SYSLOG_CPU_RATE', 8000, 1, 1_000_000);
const DURATION_S = intEnv('BENCH_SYSLOG_CPU_DURATION_S', 15, 1, 600);
const IDLE_S = 3;
const CLK_TCK = 100;

function threadTicks(pid) {
  const out = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

function processTicks(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function counters(url, token) {
  const res = await call('GET', `${url}/api/intake/counters`, { token });
  if (res.status !== 200) throw new Error(`GET /api/intake/counters: HTTP ${res.status}`);
  return res.json.syslog;
}

function sendAt(port, rate, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(HERE, 'syslog-sender.mjs'), String(port), String(rate), String(seconds)],
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

export async function runSyslogCpuBench() {
  const machine = machineInfo();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'syslog-cpu-'));
  const started = await startChild(
    'appliance',
    [
      ...(process.env.BENCH_CPU_PROF === '1'
        ? ['--cpu-prof', `--cpu-prof-dir=${path.join(RESULTS_DIR, 'profiles')}`]
        : []),
      ...startFlags(),
      SERVER_ENTRY,
    ],
    {
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_BIND: '127.0.0.1',
      APPLIANCE_HTTPS_PORT: '0',
      APPLIANCE_SYSLOG_PORT: 'auto',
      APPLIANCE_NETFLOW_PORT: '0',
      APPLIANCE_ADMIN_PASSWORD: ADMIN_PASSWORD,
      APPLIANCE_LOG_LEVEL: 'warn',
    },
    /appliance listening on (https:\/\/127\.0\.0\.1:\d+)/,
  );
  try {
    await sleep(300);
    const portsLine = started.entry.output.find((l) => l.includes('collector ports:'));
    const port = JSON.parse(portsLine.slice(portsLine.indexOf('{'))).syslog.udp;
    const token = await bearerToken(started.url);
    const pid = started.child.pid;
    // Warm up (JIT, first partition pages), then the idle CPU rate.
    await sendAt(port, Math.min(RATE, 5000), 2);
    await sleep(1500);
    const idle0 = processTicks(pid);
    await sleep(IDLE_S * 1000);
    const idlePerS = (processTicks(pid) - idle0) / CLK_TCK / IDLE_S;

    const before = await counters(started.url, token);
    const threads0 = threadTicks(pid);
    const ticks0 = processTicks(pid);
    const t0 = performance.now();
    const sent = await sendAt(port, RATE, DURATION_S);
    let after = await counters(started.url, token);
    for (let i = 0; i < 40; i++) {
      await sleep(250);
      const next = await counters(started.url, token);
      const settled =
        next.stored + next.dropped + next.filtered === next.received &&
        next.stored === after.stored;
      after = next;
      if (settled) break;
    }
    const seconds = (performance.now() - t0) / 1000;
    const ticks1 = processTicks(pid);
    const threads1 = threadTicks(pid);
    const received = after.received - before.received;
    const cpuS = (ticks1 - ticks0) / CLK_TCK - idlePerS * seconds;
    const perThread = [];
    for (const [tid, end] of threads1) {
      const start = threads0.get(tid)?.ticks ?? 0;
      const s = (end.ticks - start) / CLK_TCK;
      if (s > 0)
        perThread.push({
          tid,
          name: end.comm,
          cpuS: round(s, 2),
          usPerDatagram: round((s * 1e6) / received, 1),
        });
    }
    perThread.sort((a, b) => b.cpuS - a.cpuS);
    const summary = {
      at: new Date().toISOString(),
      machine,
      loadAverage: os.loadavg().map((l) => round(l, 2)),
      rate: RATE,
      durationS: DURATION_S,
      sent: sent.sent,
      received,
      stored: after.stored - before.stored,
      dropped: after.dropped - before.dropped,
      lostInKernel: sent.sent - received,
      idleCpuPerS: round(idlePerS, 3),
      usPerDatagram: round((cpuS * 1e6) / received, 1),
      threads: perThread.slice(0, 8),
      queryableP99Ms: after.queryable_p99_ms,
    };
    log(JSON.stringify(summary, null, 2));
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'syslog-cpu-latest.json'),
      `${JSON.stringify(summary, null, 2)}\n`,
    );
    return 0;
  } finally {
    await stopChild(started.entry);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runSyslogCpuBench());
