/**
 * sqlmap against the three log feeds (issue 14 "Injection and scope"), loopback only:
 * `npm run test:sqlmap` (after `npm run build`; needs the Debian package `sqlmap`, which
 * build/scripts/setup-debian.sh installs).
 *
 * Starts the built appliance on a fresh data dir (127.0.0.1, an ephemeral port), sends a few
 * syslog datagrams so the lists have rows, creates a token and one saved filter per feed, then
 * runs sqlmap (`--level 3 --risk 2 --dbms SQLite --batch`, with the bearer token) on every list,
 * summary, filter and saved-filter parameter of syslog, Windows events and IDS events, plus the
 * path parameters (`eve/get/{event}`, the saved filter toggle and delete) and inside the JSON of
 * `filters` (a `*` marker in a string value). Each run is bounded
 * (SQLMAP_TIMEOUT_S per target, default 900; `--time-sec 2`). Prints one line per target and a
 * summary; exit status 1 when sqlmap reports any injectable parameter (or a run fails), else 0.
 * SQLMAP_TARGETS=name,name runs only those targets (names as printed); SQLMAP_VERBOSE=1 prints
 * the end of each sqlmap output.
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ADMIN_PASSWORD,
  bearerToken,
  call,
  intEnv,
  log,
  SERVER_ENTRY,
  sleep,
  startChild,
  startFlags,
  stopChild,
} from '../bench/lib.mjs';

const TIMEOUT_S = intEnv('SQLMAP_TIMEOUT_S', 900, 30, 7200);
const ONLY = process.env.SQLMAP_TARGETS?.split(',').filter(Boolean) ?? null;

function sqlmap(args, timeoutS) {
  return new Promise((resolve) => {
    const child = spawn('sqlmap', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutS * 1000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, signal: null, out: String(err) });
    });
  });
}

async function sendSyslog(port, lines) {
  const socket = dgram.createSocket('udp4');
  for (const line of lines)
    await new Promise((resolve, reject) =>
      socket.send(line, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
  socket.close();
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlmap-'));
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlmap-out-'));
  const started = await startChild(
    'appliance',
    [...startFlags(), SERVER_ENTRY],
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
  let failures = 0;
  let injectable = 0;
  try {
    await sleep(300);
    const portsLine = started.entry.output.find((l) => l.includes('collector ports:'));
    const syslogPort = JSON.parse(portsLine.slice(portsLine.indexOf('{'))).syslog.udp;
    await sendSyslog(
      syslogPort,
      Array.from({ length: 40 }, (_, i) => `<${8 + (i % 8)}>1 - host app - - - message ${i}`),
    );
    const url = started.url;
    const token = await bearerToken(url);
    const filterIds = {};
    for (const feed of ['syslog', 'eventlog', 'eve']) {
      const created = await call('POST', `${url}/api/${feed}/filters`, {
        token,
        body: { label: 'sqlmap', filter: JSON.stringify({ severity: 3 }) },
      });
      if (created.status !== 201) throw new Error(`saved filter: HTTP ${created.status}`);
      filterIds[feed] = created.json.filter.id;
    }
    await sleep(500);

    const listQuery =
      'startTime=2026-01-01T00:00:00Z&endTime=2030-01-01T00:00:00Z&hours=24&limit=10&page=1&filters=%7B%22severity%22%3A3%7D';
    const targets = [];
    for (const feed of ['syslog', 'eventlog', 'eve']) {
      targets.push({
        name: `${feed}-list`,
        args: ['-u', `${url}/api/${feed}/list?${listQuery}`],
        params: 'startTime,endTime,hours,limit,page,filters',
      });
      // Inside the JSON of `filters` (a payload appended to the whole value is only bad JSON: 400).
      const inner = feed === 'eve' ? '{"src_ip":"127.0.0.1*"}' : '{"message":"message*"}';
      targets.push({
        name: `${feed}-list-filter-value`,
        args: [
          '-u',
          `${url}/api/${feed}/list?hours=24&filters=${encodeURIComponent(inner).replace('%2A', '*')}`,
        ],
        params: null,
      });
      targets.push({
        name: `${feed}-sevSum`,
        args: ['-u', `${url}/api/${feed}/sevSum?${listQuery.replace('&limit=10&page=1', '')}`],
        params: 'startTime,endTime,hours,filters',
      });
      targets.push({
        name: `${feed}-filters-save`,
        args: [
          '-u',
          `${url}/api/${feed}/filters`,
          '--data',
          JSON.stringify({
            label: 'probe',
            filter: JSON.stringify({ severity: 3 }),
            id: filterIds[feed],
          }),
        ],
        params: 'label,filter,id',
      });
      targets.push({
        name: `${feed}-filters-toggle`,
        args: ['-u', `${url}/api/${feed}/filters/toggle/${filterIds[feed]}*`, '--method', 'POST'],
        params: null,
      });
      targets.push({
        name: `${feed}-filters-delete`,
        // A missing id: a real one would be deleted by the first request (404 is its answer).
        args: [
          '-u',
          `${url}/api/${feed}/filters/999999*`,
          '--method',
          'DELETE',
          '--ignore-code',
          '404',
        ],
        params: null,
      });
    }
    targets.push({ name: 'eve-get', args: ['-u', `${url}/api/eve/get/1*`], params: null });

    for (const target of targets) {
      if (ONLY && !ONLY.includes(target.name)) continue;
      const t0 = Date.now();
      const run = await sqlmap(
        [
          ...target.args,
          ...(target.params ? ['-p', target.params] : []),
          '--headers',
          `Authorization: Bearer ${token}`,
          '--batch',
          '--level',
          '3',
          '--risk',
          '2',
          '--dbms',
          'SQLite',
          '--time-sec',
          '2',
          '--timeout',
          '10',
          '--retries',
          '1',
          '--flush-session',
          '--disable-coloring',
          '--output-dir',
          outDir,
        ],
        TIMEOUT_S,
      );
      const seconds = Math.round((Date.now() - t0) / 1000);
      // Only a confirmed finding counts (sqlmap's own false-positive check rejects the rest).
      const found = /identified the following injection point/i.test(run.out);
      const rejected = (run.out.match(/false positive or unexploitable/gi) ?? []).length;
      const clean =
        /do not appear to be injectable|does not seem to be injectable|all tested parameters do not appear/i.test(
          run.out,
        );
      const codes = /HTTP error codes detected during run:\s*\n(.*)/.exec(run.out)?.[1] ?? 'none';
      let verdict = 'not injectable';
      if (found) {
        verdict = 'INJECTABLE';
        injectable++;
      } else if (run.signal || !clean) {
        verdict = run.signal ? `stopped after ${TIMEOUT_S} s` : 'no verdict';
        failures++;
      }
      log(
        `${target.name}: ${verdict} (${seconds} s; HTTP error codes: ${codes}; candidates sqlmap rejected as false positives: ${rejected})`,
      );
      if (found || (!clean && !run.signal) || process.env.SQLMAP_VERBOSE === '1')
        log(
          process.env.SQLMAP_VERBOSE === '2' ? run.out : run.out.split('\n').slice(-40).join('\n'),
        );
    }
    if (!started.entry.exited) {
      const alive = await call('GET', `${url}/api/syslog/list?limit=1`, { token });
      if (alive.status !== 200) {
        log(`appliance answered HTTP ${alive.status} after the runs`);
        failures++;
      }
    } else {
      log('appliance exited during the runs');
      failures++;
    }
  } finally {
    await stopChild(started.entry);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  log(`sqlmap: ${injectable} injectable parameter(s), ${failures} run(s) without a verdict`);
  return injectable > 0 || failures > 0 ? 1 : 0;
}

process.exit(await main());
