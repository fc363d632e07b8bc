/**
 * Diagnostic: what does each layer of the appliance cost per request, over real TLS?
 * Starts a real appliance (for its data dir, token and /api/me body), then one server per rung
 * (test/bench/ladder-server.mjs), each adding one of the appliance's layers, and finally the
 * real appliance; each gets the same autocannon load. Reported per rung: req/s, p50/p99 and the
 * server's CPU µs per request, with the difference to the rung before.
 *
 *   node test/bench/ladder.mjs     (needs `npm run build`; ~100 s with the defaults)
 *
 * Environment: LADDER_CONNECTIONS (50), LADDER_DURATION_S (4), LADDER_WARMUP_S (1),
 * LADDER_ONLY (comma-separated rung numbers, e.g. "0,7,9").
 * Writes test/bench/results/ladder.json. Exit 0 when it ran, non-zero when something failed.
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
  RESULTS_DIR,
  round,
  startAppliance,
  startChild,
  stopAll,
  stopCannon,
  stopChild,
  table,
  waitReady,
} from './lib.mjs';

const LADDER_ENTRY = path.join(HERE, 'ladder-server.mjs');
const load = {
  connections: intEnv('LADDER_CONNECTIONS', 50, 1, 1000),
  durationS: intEnv('LADDER_DURATION_S', 4, 1, 60),
  warmupS: intEnv('LADDER_WARMUP_S', 1, 0, 10),
  pipelining: 1,
};

const RUNGS = [
  ['bare Fastify, logger off, constant body', ''],
  ['+ pino loggerInstance (redact), request logging off', 'logger'],
  ['+ @fastify/cookie + @fastify/formbody', 'logger,plugins'],
  ['+ @fastify/rate-limit set-up (route has no limit)', 'logger,plugins,ratelimit'],
  ['+ content-type gate + security-header onSend', 'logger,plugins,ratelimit,gates'],
  ['+ response schema Me', 'logger,plugins,ratelimit,gates,schema'],
  ['+ auth hook, real CachedIdentityResolver', 'logger,plugins,ratelimit,gates,schema,auth'],
  ['+ handler: findUserById (prepare per call)', 'logger,plugins,ratelimit,gates,schema,auth,user'],
  ['  rung 7, user statement prepared once', 'logger,plugins,ratelimit,gates,schema,auth,userprep'],
  [
    '  rung 8 + cheap childLoggerFactory',
    'logger,cheapchild,plugins,ratelimit,gates,schema,auth,userprep',
  ],
  // What-if prototypes, each against rung 8 (see ladder-server.mjs): not the appliance's code.
  [
    '  rung 8, prototype resolver (control)',
    'logger,plugins,ratelimit,gates,schema,protoauth,userprep',
  ],
  [
    '  rung 10 + crypto.hash() one-shot',
    'logger,plugins,ratelimit,gates,schema,protoauth,hashone,userprep',
  ],
  [
    '  rung 11 + bearer rows cached (bound)',
    'logger,plugins,ratelimit,gates,schema,protoauth,hashone,rowcache,userprep',
  ],
  [
    '  rung 12 + user row cached (bound)',
    'logger,plugins,ratelimit,gates,schema,protoauth,hashone,rowcache,usercache',
  ],
  [
    '  rung 10 + bearer row via raw(true)',
    'logger,plugins,ratelimit,gates,schema,protoauth,rawrows,userprep',
  ],
  [
    '  rung 14 + user: 9 columns via raw(true)',
    'logger,plugins,ratelimit,gates,schema,protoauth,rawrows,userraw',
  ],
  [
    '  rung 8 on a private copy of the db',
    'logger,plugins,ratelimit,gates,schema,auth,userprep,dbcopy',
  ],
  [
    '  rung 16 + locking_mode=EXCLUSIVE',
    'logger,plugins,ratelimit,gates,schema,auth,userprep,dbcopy,exclusive',
  ],
  ['the real appliance GET /api/me', null],
];
const only = process.env.LADDER_ONLY
  ? new Set(process.env.LADDER_ONLY.split(',').map((s) => Number(s.trim())))
  : null;
const BUDGET_MS = 60_000 + RUNGS.length * (load.warmupS + load.durationS + 10) * 1000;

let dataDir = null;
let cleaningUp = null;
function cleanup() {
  cleaningUp ??= (async () => {
    stopCannon();
    await stopAll();
    await closeAgent();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  })();
  return cleaningUp;
}

async function main() {
  const machine = machineInfo();
  log(
    `ladder: ${machine.cpuCores} CPU cores, node ${machine.node}, ${load.connections} connections, ${load.warmupS} s warm-up + ${load.durationS} s per rung`,
  );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-ladder-'));
  const appliance = await startAppliance(dataDir);
  await waitReady(appliance.url);
  const token = await bearerToken(appliance.url);
  const me = await call('GET', `${appliance.url}/api/me`, { token });
  if (me.status !== 200) throw new Error(`GET /api/me: HTTP ${me.status} ${me.text.slice(0, 300)}`);
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };

  const rows = [];
  for (const [index, [name, layers]] of RUNGS.entries()) {
    if (only && !only.has(index)) continue;
    let result;
    if (layers === null) {
      result = await measure(name, appliance.entry, `${appliance.url}/api/me`, headers, load);
    } else {
      const rung = await startChild(
        `rung ${index}`,
        [LADDER_ENTRY],
        { LADDER_DATA_DIR: dataDir, LADDER_LAYERS: layers, LADDER_BODY: me.text },
        /ladder listening on (https:\/\/127\.0\.0\.1:\d+)/,
      );
      try {
        const check = await call('GET', `${rung.url}/api/me`, { token });
        if (check.status !== 200 || check.text.length !== me.text.length)
          throw new Error(
            `rung ${index} answered HTTP ${check.status}: ${check.text.slice(0, 200)}`,
          );
        result = await measure(`rung ${index}`, rung.entry, `${rung.url}/api/me`, headers, load);
      } finally {
        await stopChild(rung.entry);
      }
    }
    const previous = rows.at(-1);
    const row = {
      index,
      name,
      layers,
      ...result,
      deltaUs: previous
        ? round(result.serverCpuUsPerRequest - previous.serverCpuUsPerRequest, 1)
        : null,
    };
    rows.push(row);
    log(
      `  ${index}. ${name}: ${row.requestsPerSec} req/s, ${row.serverCpuUsPerRequest} µs CPU/req (other CPU ${row.otherCpuPercent}%)`,
    );
  }

  log('');
  log(
    table([
      [
        'rung',
        'req/s',
        'p50 ms',
        'p99 ms',
        'CPU µs/req',
        'Δ µs',
        'server CPU',
        'bench CPU',
        'other CPU',
      ],
      ...rows.map((r) => [
        `${r.index}. ${r.name}`,
        r.requestsPerSec,
        r.latencyMs.p50,
        r.latencyMs.p99,
        r.serverCpuUsPerRequest,
        r.deltaUs ?? '',
        `${r.serverCpuPercent}%`,
        `${r.clientCpuPercent}%`,
        `${r.otherCpuPercent}%`,
      ]),
    ]),
  );
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(RESULTS_DIR, 'ladder.json'),
    `${JSON.stringify({ finishedAt: new Date().toISOString(), machine, load, rows }, null, 2)}\n`,
  );
  log('results: test/bench/results/ladder.json');
}

process.once('SIGINT', () => cleanup().finally(() => process.exit(130)));
process.once('SIGTERM', () => cleanup().finally(() => process.exit(130)));
process.on('exit', () => {
  killAllNow();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});
const watchdog = setTimeout(() => {
  process.stderr.write(`ladder: exceeded its time budget of ${BUDGET_MS / 1000} s\n`);
  cleanup().finally(() => process.exit(2));
}, BUDGET_MS);

let exitCode = 0;
try {
  await main();
} catch (err) {
  exitCode = 1;
  process.stderr.write(`ladder FAILED: ${err?.stack ?? err}\n`);
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
process.exit(exitCode);
