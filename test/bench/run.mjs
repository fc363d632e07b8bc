/**
 * `npm run bench`: throughput and memory of a real appliance against a bare Fastify baseline.
 *
 *  1. Starts the built appliance (`node appliance-core/dist/server.js`) on a fresh temp data dir
 *     and a free 127.0.0.1 port, waits for POST /api/information = 200, idles ~5 s and reads
 *     VmRSS from /proc/<pid>/status (target <= 150 MB).
 *  2. Signs in as admin and creates a personal access token (the bearer of the load).
 *  3. Starts test/bench/bare-server.mjs with the appliance's own TLS cert/key, answering the
 *     appliance's GET /api/me body verbatim on GET /bare.
 *  4. Runs autocannon against GET /api/me (with the bearer) and GET /bare with identical
 *     settings, each after a short warm-up; every answer must be 2xx (a 401 means the bench
 *     measured the wrong thing).
 *  5. Prints req/s, p50, p99 and the ratio appliance/bare (target >= 70%), RSS after load, and
 *     each server's CPU time per request (a figure a busy machine disturbs much less).
 *  6. Writes test/bench/results/latest.json.
 *
 * Exit status: 0 when the measurement ran (PASS or MISS alike); non-zero when something failed
 * to run (a child did not start, non-2xx answers, connection errors, time budget exceeded...).
 *
 * Rounds: BENCH_ROUNDS (3) rounds of one load each, alternating which server goes first; the
 * verdict is the median round's ratio (the host's speed drifts on a shared machine).
 * Environment: BENCH_CONNECTIONS (50), BENCH_DURATION_S (10), BENCH_WARMUP_S (2),
 * BENCH_IDLE_S (5), BENCH_CPU_PROF=1 (run both servers under `node --cpu-prof`; the profiles
 * land in test/bench/results/profiles/, summarise them with test/bench/profile-summary.mjs).
 * Prerequisite: `npm run build`. Diagnostics: test/bench/ladder.mjs, test/bench/hotpath.mjs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  bearerToken,
  call,
  closeAgent,
  HERE,
  intEnv,
  killAllNow,
  log,
  machineInfo,
  measure,
  memoryOf,
  RESULTS_DIR,
  ROOT,
  round,
  sleep,
  startAppliance,
  startChild,
  stopAll,
  stopCannon,
  table,
  assertAlive,
  waitReady,
} from './lib.mjs';

// BENCH=pollers runs only the poller bench (test/bench/pollers/); BENCH=all runs it after this one.
const BENCH_KIND = process.env.BENCH ?? 'http';
if (BENCH_KIND === 'pollers') {
  const { runPollersBench } = await import('./pollers/pollers-bench.mjs');
  process.exit(await runPollersBench());
}
// BENCH=syslog runs only the syslog intake bench (test/bench/syslog.bench.mjs); BENCH=all runs it last.
if (BENCH_KIND === 'syslog') {
  const { runSyslogBench } = await import('./syslog.bench.mjs');
  process.exit(await runSyslogBench());
}
// BENCH=flows runs only the flow intake bench (test/bench/flows.bench.mjs).
if (BENCH_KIND === 'flows') {
  const { runFlowsBench } = await import('./flows.bench.mjs');
  process.exit(await runFlowsBench());
}

// BENCH=flows-list: the active flow list in process, slot index against the top-N sort (test/bench/flows-list.bench.mjs).
if (BENCH_KIND === 'flows-list') {
  const { runFlowsListBench } = await import('./flows-list.bench.mjs');
  process.exit(await runFlowsListBench());
}

// BENCH=combined: syslog and flows together at half their floors (test/bench/combined.bench.mjs).
if (BENCH_KIND === 'combined') {
  const { runCombinedBench } = await import('./combined.bench.mjs');
  process.exit(await runCombinedBench());
}

// BENCH=retention runs only the retention pruner bench (test/bench/retention.bench.mjs).
if (BENCH_KIND === 'retention') {
  const { runRetentionBench } = await import('./retention.bench.mjs');
  process.exit(await runRetentionBench());
}

// BENCH=delivery runs only the alert delivery bench (test/bench/delivery.bench.mjs).
if (BENCH_KIND === 'delivery') {
  const { runDeliveryBench } = await import('./delivery.bench.mjs');
  process.exit(await runDeliveryBench());
}

// BENCH=syslog-cpu: CPU per datagram of the syslog intake at a fixed rate (test/bench/syslog-cpu.bench.mjs).
if (BENCH_KIND === 'syslog-cpu') {
  const { runSyslogCpuBench } = await import('./syslog-cpu.bench.mjs');
  process.exit(await runSyslogCpuBench());
}

// BENCH=alerts: alert evaluation lag against 200 enabled alerts under syslog intake (test/bench/alerts.bench.mjs).
if (BENCH_KIND === 'alerts') {
  const { runAlertsBench } = await import('./alerts.bench.mjs');
  process.exit(await runAlertsBench());
}

// BENCH=capture runs only the packet capture bench (test/bench/capture.bench.mjs).
if (BENCH_KIND === 'capture') {
  const { runCaptureBench } = await import('./capture.bench.mjs');
  process.exit(await runCaptureBench());
}

const BARE_ENTRY = path.join(HERE, 'bare-server.mjs');
const PROFILE_DIR = path.join(RESULTS_DIR, 'profiles');
const RSS_TARGET_MB = 150;
const RATIO_TARGET = 0.7;

const settings = {
  connections: intEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  durationS: intEnv('BENCH_DURATION_S', 10, 1, 120),
  warmupS: intEnv('BENCH_WARMUP_S', 2, 0, 30),
  idleS: intEnv('BENCH_IDLE_S', 5, 0, 60),
  pipelining: 1,
  rounds: intEnv('BENCH_ROUNDS', 3, 1, 9),
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
};
/** The whole bench, every phase included; beyond it the run is abandoned as failed. */
const TOTAL_BUDGET_MS =
  90_000 +
  settings.rounds * 2 * (settings.warmupS + settings.durationS) * 1000 +
  settings.idleS * 1000;

let dataDir = null;
let cleaningUp = null;

async function cleanup() {
  if (cleaningUp) return cleaningUp;
  cleaningUp = (async () => {
    stopCannon();
    await stopAll();
    await closeAgent();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  })();
  return cleaningUp;
}

async function main() {
  const started = Date.now();
  const machine = machineInfo();
  log(
    `bench: ${machine.cpuCores} CPU cores (${machine.cpuModel}), node ${machine.node}, ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupS} s warm-up + ${settings.durationS} s per server`,
  );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-bench-'));

  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const profileArgs = (name) => {
    if (!settings.cpuProfile) return [];
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    return [
      '--cpu-prof',
      `--cpu-prof-dir=${PROFILE_DIR}`,
      `--cpu-prof-name=${name}-${stamp}.cpuprofile`,
    ];
  };

  // 1. the appliance, idle memory
  const appliance = await startAppliance(dataDir, profileArgs('appliance'));
  await waitReady(appliance.url);
  log(
    `appliance: ready at ${appliance.url} (pid ${appliance.child.pid}) ${Date.now() - started} ms after launch; idling ${settings.idleS} s`,
  );
  await sleep(settings.idleS * 1000);
  assertAlive(appliance.entry);
  const idle = memoryOf(appliance.child.pid);
  const rssVerdict = idle.rssMb <= RSS_TARGET_MB ? 'PASS' : 'MISS';
  log(`appliance idle RSS: ${idle.rssMb} MB (target <= ${RSS_TARGET_MB} MB) ${rssVerdict}`);

  // 2. the bearer token
  const token = await bearerToken(appliance.url);
  const me = await call('GET', `${appliance.url}/api/me`, { token });
  if (me.status !== 200 || !me.json?.username)
    throw new Error(`GET /api/me with the new token: HTTP ${me.status} ${me.text.slice(0, 300)}`);

  // 3. the bare baseline: same TLS identity, same body
  const bare = await startChild(
    'bare',
    [...profileArgs('bare'), BARE_ENTRY],
    {
      BARE_CERT_FILE: path.join(dataDir, 'tls', 'cert.pem'),
      BARE_DATA_DIR: dataDir,
      BARE_BODY: me.text,
      BARE_PORT: '0',
    },
    /bare listening on (https:\/\/127\.0\.0\.1:\d+)/,
  );
  const bareCheck = await call('GET', `${bare.url}/bare`);
  if (bareCheck.status !== 200 || bareCheck.text.length !== me.text.length) {
    throw new Error(
      `bare server answered HTTP ${bareCheck.status} with ${bareCheck.text.length} bytes (expected 200, ${me.text.length})`,
    );
  }
  log(
    `bare: ready at ${bare.url} (pid ${bare.child.pid}); body ${bareCheck.text.length} bytes, same as /api/me`,
  );

  // 4. load, one server after the other, identical settings
  const load = {
    connections: settings.connections,
    pipelining: settings.pipelining,
    warmupS: settings.warmupS,
    durationS: settings.durationS,
  };
  // Rounds alternate the order (appliance first, then bare first ...) so that a change in the
  // host's speed during the bench falls on both servers; the verdict is the median round's ratio.
  const rounds = [];
  for (let n = 0; n < settings.rounds; n++) {
    const runAppliance = async () => {
      log(`load (round ${n + 1}/${settings.rounds}): appliance GET /api/me ...`);
      return measure(
        'appliance',
        appliance.entry,
        `${appliance.url}/api/me`,
        { authorization: `Bearer ${token}`, accept: 'application/json' },
        load,
      );
    };
    const runBare = async () => {
      log(`load (round ${n + 1}/${settings.rounds}): bare GET /bare ...`);
      return measure('bare', bare.entry, `${bare.url}/bare`, { accept: 'application/json' }, load);
    };
    let applianceRun;
    let bareRun;
    if (n % 2 === 0) {
      applianceRun = await runAppliance();
      bareRun = await runBare();
    } else {
      bareRun = await runBare();
      applianceRun = await runAppliance();
    }
    rounds.push({
      applianceRun,
      bareRun,
      ratio: applianceRun.requestsPerSec / bareRun.requestsPerSec,
    });
  }
  const afterLoad = memoryOf(appliance.child.pid);
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
  const { applianceRun, bareRun } = median;
  const bareMemory = memoryOf(bare.child.pid);

  // 5. report
  const ratio = applianceRun.requestsPerSec / bareRun.requestsPerSec;
  const ratioVerdict = ratio >= RATIO_TARGET ? 'PASS' : 'MISS';
  const cpuRatio = bareRun.serverCpuUsPerRequest / applianceRun.serverCpuUsPerRequest;
  log('');
  log(
    table([
      [
        'server',
        'req/s (avg)',
        'p50 ms',
        'p99 ms',
        'requests',
        'server CPU µs/req',
        'server CPU',
        'bench CPU',
        'other CPU',
      ],
      ...rounds
        .flatMap((r, i) => [
          [`${i + 1}. appliance GET /api/me`, r.applianceRun],
          [`${i + 1}. bare fastify GET /bare`, r.bareRun],
        ])
        .map(([name, r]) => [
          name,
          r.requestsPerSec,
          r.latencyMs.p50,
          r.latencyMs.p99,
          r.requestsTotal,
          r.serverCpuUsPerRequest,
          `${r.serverCpuPercent}%`,
          `${r.clientCpuPercent}%`,
          `${r.otherCpuPercent}%`,
        ]),
    ]),
  );
  log(
    '(CPU columns: % of one core during the measured run; "bench" is autocannon in this process, "other" every other process on the machine)',
  );
  const noisy = Math.max(
    ...rounds.flatMap((r) => [r.applianceRun.otherCpuPercent, r.bareRun.otherCpuPercent]),
  );
  if (noisy > 20)
    log(
      `WARNING: other processes used up to ${noisy}% of a core during the runs: req/s figures are disturbed; the CPU µs/req figures much less so`,
    );
  log('');
  log(
    `ratio appliance/bare per round: ${rounds.map((r) => `${(r.ratio * 100).toFixed(1)}%`).join(', ')}`,
  );
  log(
    `ratio appliance/bare (median round): ${(ratio * 100).toFixed(1)}% (target >= ${RATIO_TARGET * 100}%) ${ratioVerdict}`,
  );
  log(
    `server CPU per request, bare/appliance: ${(cpuRatio * 100).toFixed(1)}% (the same comparison from CPU cost)`,
  );
  log(`appliance idle RSS: ${idle.rssMb} MB (target <= ${RSS_TARGET_MB} MB) ${rssVerdict}`);
  log(
    `appliance RSS after load: ${afterLoad.rssMb} MB (peak ${afterLoad.peakRssMb} MB); bare RSS after load: ${bareMemory.rssMb} MB`,
  );

  // 6. results file
  const results = {
    finishedAt: new Date().toISOString(),
    machine,
    settings: {
      connections: settings.connections,
      pipelining: settings.pipelining,
      warmupS: settings.warmupS,
      durationS: settings.durationS,
      idleS: settings.idleS,
      rounds: settings.rounds,
      cpuProfile: settings.cpuProfile,
    },
    memory: {
      idleRssMb: idle.rssMb,
      targetMb: RSS_TARGET_MB,
      verdict: rssVerdict,
      afterLoadRssMb: afterLoad.rssMb,
      afterLoadPeakRssMb: afterLoad.peakRssMb,
      bareAfterLoadRssMb: bareMemory.rssMb,
    },
    appliance: applianceRun,
    bare: bareRun,
    rounds: rounds.map((r) => ({
      ratio: round(r.ratio, 4),
      applianceRps: r.applianceRun.requestsPerSec,
      bareRps: r.bareRun.requestsPerSec,
      applianceCpuUs: r.applianceRun.serverCpuUsPerRequest,
      bareCpuUs: r.bareRun.serverCpuUsPerRequest,
    })),
    ratio: {
      value: round(ratio, 4),
      target: RATIO_TARGET,
      verdict: ratioVerdict,
      cpuCostRatio: round(cpuRatio, 4),
    },
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  log(
    `results: ${path.relative(ROOT, path.join(RESULTS_DIR, 'latest.json'))} (${round((Date.now() - started) / 1000, 1)} s in all)`,
  );
}

// --- entry: every path ends in cleanup ------------------------------------------------------

const onSignal = (signal) => {
  process.stderr.write(`bench: ${signal}, stopping\n`);
  cleanup().finally(() => process.exit(130));
};
process.once('SIGINT', () => onSignal('SIGINT'));
process.once('SIGTERM', () => onSignal('SIGTERM'));
process.on('exit', () => {
  killAllNow();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const watchdog = setTimeout(() => {
  process.stderr.write(
    `bench: exceeded its time budget of ${TOTAL_BUDGET_MS / 1000} s, abandoning\n`,
  );
  cleanup().finally(() => process.exit(2));
}, TOTAL_BUDGET_MS);

let exitCode = 0;
try {
  await main();
} catch (err) {
  exitCode = 1;
  process.stderr.write(`bench FAILED: ${err?.stack ?? err}\n`);
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
if (settings.cpuProfile && exitCode === 0) {
  const profiles = fs.existsSync(PROFILE_DIR)
    ? fs.readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile'))
    : [];
  log(
    `cpu profiles in ${path.relative(ROOT, PROFILE_DIR)}: ${profiles.join(', ') || 'none'} (summarise: node test/bench/profile-summary.mjs <file>)`,
  );
}
if (BENCH_KIND === 'all' && exitCode === 0) {
  const { runPollersBench } = await import('./pollers/pollers-bench.mjs');
  exitCode = await runPollersBench();
}
if (BENCH_KIND === 'all' && exitCode === 0) {
  const { runSyslogBench } = await import('./syslog.bench.mjs');
  exitCode = await runSyslogBench();
}
process.exit(exitCode);
