/**
 * Poller benchmark (issue 5), loopback only: the built appliance polls, all at once,
 *   - 20 000 latency trackers every 10 s (2 000 pings/s; one device per tracker, 127.16.0.0/14 addresses),
 *   - 10 000 TCP port trackers every 60 s (100 devices on 127.2.0.x: per device 10 ports with a
 *     listener bound to that address and 90 closed ones),
 *   - 1 000 SNMP OID trackers every 60 s (10 devices on 127.3.0.x, one snmpd listening on all ten),
 * for BENCH_POLLERS_DURATION_S (default 300) after a warm-up of one interval, while a bounded loop
 * requests GET /api/devices (the full list, 20 000+ devices) and GET /api/devices?status=down,
 * each timed to the last byte of its body (not parsed: see timedGet in ../lib.mjs).
 *
 * Reports: expected vs written samples (lost), the scheduler's lateness p99 (worst 5-second
 * reading, from the appliance's `poller stats at stop` log line), CPU (appliance user+sys, and
 * with its children, fping included, per core of wall time), RSS, and the request p99s.
 * Writes test/bench/results/pollers-latest.json.
 *
 * Environment: BENCH_POLLERS_DURATION_S (300), BENCH_POLLERS_LATENCY (20000),
 * BENCH_POLLERS_PORTS (10000), BENCH_POLLERS_SNMP (1000). Prerequisite: `npm run build`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../../appliance-core/dist/platform/db/database.js';
import {
  ADMIN_PASSWORD,
  bearerToken,
  call,
  intEnv,
  log,
  machineInfo,
  memoryOf,
  RESULTS_DIR,
  round,
  SERVER_ENTRY,
  sleep,
  startChild,
  startFlags,
  stopChild,
  timedGet,
  waitReady,
} from '../lib.mjs';

const CLK_TCK = 100;

function cpuOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    own: (Number(f[11]) + Number(f[12])) / CLK_TCK,
    children: (Number(f[13]) + Number(f[14])) / CLK_TCK,
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function startApplianceChild(dataDir) {
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
    },
    /appliance listening on (https:\/\/127\.0\.0\.1:\d+)/,
  );
}

async function startSnmpd(dir, addresses) {
  const probe = net.createServer();
  const port = await new Promise((resolve) =>
    probe.listen(0, '127.0.0.1', () => resolve(probe.address().port)),
  );
  await new Promise((r) => probe.close(r));
  const conf = path.join(dir, 'snmpd.conf');
  fs.writeFileSync(
    conf,
    `agentAddress ${addresses.map((a) => `udp:${a}:${port}`).join(',')}\nsysName bench-peer\nrocommunity benchcommunity 127.0.0.0/8\n`,
  );
  const child = spawn(
    'snmpd',
    ['-f', '-C', '-c', conf, '-M', '/dev/null', '-I', '-smux', '-Lf', path.join(dir, 'snmpd.log')],
    {
      env: {
        PATH: process.env.PATH ?? '/usr/sbin:/usr/bin',
        MIBS: '',
        SNMP_PERSISTENT_DIR: path.join(dir, 'persist'),
        SNMPCONFPATH: dir,
      },
      stdio: 'ignore',
    },
  );
  await sleep(1500);
  if (child.exitCode !== null) throw new Error('snmpd exited at start');
  return { child, port };
}

const ipOf = (base, n) => `${base[0]}.${base[1] + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;

export async function runPollersBench() {
  const settings = {
    durationS: intEnv('BENCH_POLLERS_DURATION_S', 300, 20, 3600),
    latency: intEnv('BENCH_POLLERS_LATENCY', 20_000, 1, 65_000),
    ports: intEnv('BENCH_POLLERS_PORTS', 10_000, 100, 50_000),
    snmp: intEnv('BENCH_POLLERS_SNMP', 1_000, 10, 10_000),
  };
  const machine = machineInfo();
  log(
    `pollers bench: ${machine.cpuCores} cores (${machine.cpuModel}), node ${machine.node}; ${settings.latency} latency trackers @10 s, ${settings.ports} TCP ports @60 s, ${settings.snmp} SNMP OIDs @60 s, ${settings.durationS} s measured`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-pollers-bench-'));
  const listeners = [];
  let snmpd = null;
  let appliance = null;
  const watchdog = setTimeout(
    () => {
      process.stderr.write('pollers bench: time budget exceeded, abandoning\n');
      appliance?.child.kill('SIGKILL');
      snmpd?.child.kill('SIGKILL');
      process.exit(2);
    },
    // The measured window, warm-up and stop, plus set-up time that grows with the counts (the OID
    // trackers are created through the API while the appliance already polls the rest).
    (settings.durationS +
      300 +
      Math.ceil((settings.latency + settings.ports) / 1000) * 3 +
      Math.ceil(settings.snmp / 50)) *
      1000,
  );
  try {
    // 1. Create the database (first start), stop, seed latency and port trackers directly.
    appliance = await startApplianceChild(dataDir);
    await waitReady(appliance.url);
    await stopChild(appliance.entry);
    const db = openDatabase(path.join(dataDir, 'appliance.db'));
    const now = Date.now();
    const portDevices = 100;
    const openPerDevice = 10;
    const portsPerDevice = Math.ceil(settings.ports / portDevices);
    const portPlan = [];
    db.transaction(() => {
      db.prepare('UPDATE latency_trackers SET interval = 10').run();
      const device = db.prepare(
        "INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES (?, ?, 'dash_generic', ?, ?)",
      );
      const latency = db.prepare(
        'INSERT INTO latency_trackers (device_id, label, interval, timeout, lossout, created_at, updated_at) VALUES (?, ?, 10, 500, 100, ?, ?)',
      );
      for (let i = 1; i < settings.latency; i++) {
        const id = Number(device.run(`ping-${i}`, ipOf([127, 16], i), now, now).lastInsertRowid);
        latency.run(id, `ping-${i}`, now, now);
      }
      for (let d = 1; d <= portDevices; d++) {
        const ip = `127.2.0.${d}`;
        const id = Number(device.run(`ports-${d}`, ip, now, now).lastInsertRowid);
        portPlan.push({ id, ip });
      }
    })();
    // Listeners bound to each port device's own address (loopback only).
    for (const { ip } of portPlan) {
      for (let k = 0; k < openPerDevice; k++) {
        const server = net.createServer((s) => s.destroy());
        await new Promise((resolve, reject) => server.once('error', reject).listen(0, ip, resolve));
        listeners.push({ server, ip, port: server.address().port });
      }
    }
    db.transaction(() => {
      const port = db.prepare(
        "INSERT INTO port_trackers (device_id, port, label, interval, created_at, updated_at) VALUES (?, ?, '', 60, ?, ?)",
      );
      let made = 0;
      for (const { id, ip } of portPlan) {
        const open = listeners.filter((l) => l.ip === ip).map((l) => l.port);
        const used = new Set(open);
        for (const p of open) {
          if (made >= settings.ports) break;
          port.run(id, p, now, now);
          made++;
        }
        for (let p = 61_000; used.size < portsPerDevice && made < settings.ports; p++) {
          if (used.has(p)) continue;
          used.add(p);
          port.run(id, p, now, now);
          made++;
        }
      }
    })();
    db.close();

    // 2. snmpd on ten loopback addresses; the appliance again; SNMP devices and OID trackers through the API.
    const snmpAddresses = Array.from({ length: 10 }, (_, i) => `127.3.0.${i + 1}`);
    snmpd = await startSnmpd(dataDir, snmpAddresses);
    appliance = await startApplianceChild(dataDir);
    await waitReady(appliance.url);
    const token = await bearerToken(appliance.url);
    const oidsPerDevice = Math.ceil(settings.snmp / snmpAddresses.length);
    const OIDS = [
      '1.3.6.1.2.1.1.3.0',
      '1.3.6.1.2.1.1.5.0',
      '1.3.6.1.2.1.2.1.0',
      '1.3.6.1.2.1.1.1.0',
      '1.3.6.1.2.1.2.2.1.10.1',
      '1.3.6.1.2.1.2.2.1.16.1',
      '1.3.6.1.2.1.2.2.1.8.1',
      '1.3.6.1.2.1.25.1.1.0',
    ];
    log(
      `appliance started with ${settings.latency} latency and ${settings.ports} port trackers; creating ${settings.snmp} OID trackers through the API`,
    );
    let made = 0;
    for (const ip of snmpAddresses) {
      const dev = await call('POST', `${appliance.url}/api/device/set`, {
        token,
        body: {
          ip_address: ip,
          label: `snmp-${ip}`,
          profile: 'dash_generic',
          enable_snmp: true,
          snmpconfig: { snmp_version: 2, snmp_port: snmpd.port, snmp_community: 'benchcommunity' },
        },
      });
      if (dev.status !== 200)
        throw new Error(`device/set: HTTP ${dev.status} ${dev.text.slice(0, 200)}`);
      for (let k = 0; k < oidsPerDevice && made < settings.snmp; k++, made++) {
        const oid = OIDS[k % OIDS.length];
        const res = await call('POST', `${appliance.url}/api/oid/set`, {
          token,
          body: {
            deviceId: dev.json.device.id,
            oid,
            datatype: oid.endsWith('.1.5.0') || oid.endsWith('.1.1.0') ? 'S' : 'I',
            interval: 60,
          },
        });
        if (res.status !== 201)
          throw new Error(`oid/set: HTTP ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
    log(
      `seeded: ${settings.latency} latency, ${settings.ports} port (${listeners.length} listening), ${made} OID trackers; warming up 60 s`,
    );

    // 3. Warm-up (every job has run once), then the measured window.
    await sleep(60_000);
    const pid = appliance.child.pid;
    const t0 = Date.now();
    const cpu0 = cpuOf(pid);
    const full = [];
    const down = [];
    let rssPeak = 0;
    const loopEnd = t0 + settings.durationS * 1000;
    for (let i = 0; i < settings.durationS * 4 && Date.now() < loopEnd; i++) {
      const which = i % 2 === 0 ? full : down;
      // Timed to the last byte, unparsed (see timedGet); the first answer of each kind is parsed
      // once, outside the timing, to prove the bench measured the real list.
      const res = await timedGet(
        `${appliance.url}/api/devices${which === down ? '?status=down' : ''}`,
        token,
      );
      if (res.status !== 200) throw new Error(`GET /api/devices: HTTP ${res.status}`);
      which.push(res.ms);
      if (i < 2) {
        const listed = JSON.parse(res.body.toString('utf8')).devices.length;
        if (which === full && listed < settings.latency)
          throw new Error(
            `GET /api/devices listed ${listed} devices, expected ${settings.latency + 110}`,
          );
        log(
          `GET /api/devices${which === down ? '?status=down' : ''}: ${listed} devices, ${round(res.bytes / 1e6, 2)} MB`,
        );
      }
      rssPeak = Math.max(rssPeak, memoryOf(pid).rssMb);
      await sleep(250);
    }
    const t1 = Date.now();
    const cpu1 = cpuOf(pid);
    const rss = memoryOf(pid);
    // Let batches started before t1 finish (their samples are stamped before t1) before stopping.
    await sleep(5000);

    // 4. Stop (flushes the sample writer and logs the scheduler's lateness), then count samples.
    const statsLine = new Promise((resolve) => {
      const onData = (chunk) => {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line.includes('poller stats at stop')) resolve(JSON.parse(line));
      };
      appliance.child.stdout.on('data', onData);
      setTimeout(() => resolve(null), 10_000).unref();
    });
    await stopChild(appliance.entry);
    const stats = await statsLine;
    const check = openDatabase(path.join(dataDir, 'appliance.db'), { readonly: true });
    // Two figures per kind. `short`: trackers' samples stamped in [t0, t1) below floor(window /
    // interval), which also counts a reading whose due time was just before t1 but which started
    // (and was stamped) after it: an edge effect, not a loss. `lost`: slots with no reading, from
    // each tracker's own series: the samples between its first and last reading (stamped in
    // [t0, t1 + 1 s)) against the span / interval, plus whole intervals with no reading at either
    // end of the window. A tracker with no reading at all loses every slot.
    const lost = (table, trackers, intervalS, where = '') => {
      const intervalMs = intervalS * 1000;
      const expectedEach = Math.floor((t1 - t0) / intervalMs);
      const ids = check.prepare(`SELECT t.id FROM ${trackers} t ${where}`).pluck().all();
      const series = new Map(ids.map((id) => [id, { n: 0, inWindow: 0, first: null, last: null }]));
      const rows = check
        .prepare(
          `SELECT tracker_id AS id, ts FROM ${table} WHERE ts >= ? AND ts < ? ORDER BY tracker_id, ts`,
        )
        .raw(true)
        .iterate(t0, t1 + 1000);
      for (const [id, ts] of rows) {
        const s = series.get(id);
        if (!s) continue;
        s.n++;
        if (ts < t1) s.inWindow++;
        s.first ??= ts;
        s.last = ts;
      }
      let short = 0;
      let missed = 0;
      let written = 0;
      for (const s of series.values()) {
        written += s.inWindow;
        short += Math.max(0, expectedEach - s.inWindow);
        if (s.n === 0) {
          missed += expectedEach;
          continue;
        }
        missed += Math.max(0, Math.round((s.last - s.first) / intervalMs) + 1 - s.n);
        // 1 s of slack at each end: a reading is stamped when its batch starts, up to the lateness after its due time.
        missed +=
          Math.floor(Math.max(0, s.first - t0 - 1000) / intervalMs) +
          Math.floor(Math.max(0, t1 - s.last - 1000) / intervalMs);
      }
      return {
        trackers: series.size,
        expected: expectedEach * series.size,
        written,
        short,
        lost: missed,
      };
    };
    const samples = {
      latency: lost('latency_samples', 'latency_trackers', 10),
      ports: lost('port_samples', 'port_trackers', 60),
      oids: lost('oid_samples', 'oid_trackers', 60, "WHERE t.kind = 'oid'"),
    };
    check.close();
    const wall = (t1 - t0) / 1000;
    const result = {
      when: new Date().toISOString(),
      machine,
      settings,
      measuredSeconds: round(wall, 1),
      samples,
      lateness: stats?.lateness ?? null,
      scheduler: stats?.scheduler ?? null,
      engine: stats?.counters ?? null,
      writer: stats?.writer ?? null,
      cpu: {
        applianceCores: round((cpu1.own - cpu0.own) / wall, 3),
        withChildrenCores: round((cpu1.own + cpu1.children - cpu0.own - cpu0.children) / wall, 3),
      },
      rss: { endMb: rss.rssMb, peakMb: Math.max(rssPeak, rss.peakRssMb) },
      api: {
        fullList: {
          requests: full.length,
          p50: round(
            percentile(
              full.sort((a, b) => a - b),
              50,
            ),
            1,
          ),
          p99: round(percentile(full, 99), 1),
        },
        statusDown: {
          requests: down.length,
          p50: round(
            percentile(
              down.sort((a, b) => a - b),
              50,
            ),
            1,
          ),
          p99: round(percentile(down, 99), 1),
        },
      },
    };
    const errors = appliance.entry.output.filter((line) => line.includes('"level":50')).slice(0, 3);
    for (const line of errors) log(`appliance error: ${line.slice(0, 600)}`);
    for (const [kind, s] of Object.entries(samples))
      log(
        `${kind}: ${s.trackers} trackers, expected ${s.expected}, written ${s.written} (short of the window count: ${s.short}), lost ${s.lost}`,
      );
    log(`engine: ${JSON.stringify(result.engine)}; writer: ${JSON.stringify(result.writer)}`);
    log(
      `scheduler lateness: worst 5-s p99 ${result.lateness?.worstP99 ?? '?'} ms, worst max ${result.lateness?.worstMax ?? '?'} ms; overruns ${result.scheduler?.overruns ?? '?'}, failures ${result.scheduler?.failures ?? '?'}`,
    );
    log(
      `cpu: appliance ${result.cpu.applianceCores} cores, with children (fping) ${result.cpu.withChildrenCores} cores; RSS end ${result.rss.endMb} MB, peak ${result.rss.peakMb} MB`,
    );
    log(
      `GET /api/devices (all ${settings.latency + 110} devices): p50 ${result.api.fullList.p50} ms, p99 ${result.api.fullList.p99} ms; ?status=down: p50 ${result.api.statusDown.p50} ms, p99 ${result.api.statusDown.p99} ms`,
    );
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'pollers-latest.json'),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`pollers bench FAILED: ${err?.stack ?? err}\n`);
    for (const line of appliance?.entry.output
      .filter((l) => l.includes('"level":50'))
      .slice(0, 3) ?? [])
      process.stderr.write(`appliance error: ${line.slice(0, 800)}\n`);
    return 1;
  } finally {
    clearTimeout(watchdog);
    if (appliance && !appliance.entry.exited) await stopChild(appliance.entry);
    if (snmpd) snmpd.child.kill('SIGTERM');
    for (const l of listeners) l.server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runPollersBench());
