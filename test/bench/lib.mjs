/**
 * Shared pieces of the benchmarks: child servers, /proc readings, set-up HTTP calls and
 * autocannon runs. Everything is bounded: child start-up, each HTTP call, each load run.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Agent, request as undiciRequest } from 'undici';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const SERVER_ENTRY = path.join(ROOT, 'appliance-core/dist/server.js');
export const RESULTS_DIR = path.join(HERE, 'results');
export const ADMIN_PASSWORD = 'Bench-Admin-Passw0rd!';

const START_TIMEOUT_MS = 20_000;
const READY_TIMEOUT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 10_000;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function round(value, digits = 0) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function log(line) {
  process.stdout.write(`${line}\n`);
}

export function intEnv(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number between ${min} and ${max} (got "${raw}")`);
  }
  return value;
}

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuCores: cpus.length,
    cpuModel: cpus[0]?.model ?? null,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

const CLK_TCK = (() => {
  try {
    return (
      Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2_000 }).trim()) ||
      100
    );
  } catch {
    return 100;
  }
})();

// --- child processes ------------------------------------------------------------------------

/** Every child started and not yet stopped; `stopAll` and the exit hook use it. */
export const children = new Set();

/**
 * Spawns `node <args>` and resolves `{entry, child, url}` once a stdout line matches `ready`
 * (its first group is the URL); rejects with the child's recent output when it exits first or
 * the deadline passes.
 */
export function startChild(name, args, env, ready) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { name, child, output: [], exited: null };
  children.add(entry);
  const remember = (stream) => (chunk) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      entry.output.push(`[${name} ${stream}] ${line}`);
      if (entry.output.length > 200) entry.output.shift();
    }
  };
  child.stderr.on('data', remember('stderr'));
  child.stdout.on('data', remember('stdout'));
  entry.exitPromise = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      entry.exited = { code, signal };
      resolve(entry.exited);
    });
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      reject(
        new Error(
          `${name} did not print its ready line within ${START_TIMEOUT_MS} ms\n${entry.output.join('\n')}`,
        ),
      );
    }, START_TIMEOUT_MS);
    const onData = (chunk) => {
      buffer += chunk.toString('utf8');
      const match = ready.exec(buffer);
      if (match) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        resolve({ entry, child, url: match[1] });
      } else if (buffer.length > 65_536) buffer = buffer.slice(-4_096);
    };
    child.stdout.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${name} could not be spawned: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${name} exited before it was ready (code ${code}, signal ${signal})\n${entry.output.join('\n')}`,
        ),
      );
    });
  });
}

/** SIGTERM, up to 7 s for a graceful exit (the appliance allows itself 5 s), then SIGKILL. */
export async function stopChild(entry) {
  if (!entry.exited) {
    entry.child.kill('SIGTERM');
    const graceful = await Promise.race([entry.exitPromise, sleep(7_000).then(() => null)]);
    if (!graceful) {
      entry.child.kill('SIGKILL');
      await Promise.race([entry.exitPromise, sleep(2_000)]);
    }
  }
  children.delete(entry);
  return entry.exited;
}

export function stopAll() {
  return Promise.all([...children].map((entry) => stopChild(entry)));
}

/** Last resort when the bench process goes down some other way: no orphaned servers. */
export function killAllNow() {
  for (const entry of children) if (!entry.exited) entry.child.kill('SIGKILL');
}

export function assertAlive(entry) {
  if (entry.exited) {
    throw new Error(
      `${entry.name} exited during the bench (code ${entry.exited.code}, signal ${entry.exited.signal})\n${entry.output.join('\n')}`,
    );
  }
}

/**
 * The Node flags `npm start` runs the appliance with (package.json's start script is the one
 * place they are written): the benches start the appliance exactly as a user does.
 */
export function startFlags() {
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
  const match = /^node((?:\s+--\S+)*)\s+appliance-core\/dist\/server\.js$/.exec(script);
  if (!match)
    throw new Error(
      `package.json start script is not "node [--flags] appliance-core/dist/server.js": ${script}`,
    );
  return match[1].trim().split(/\s+/).filter(Boolean);
}

/**
 * Starts the built appliance on `dataDir` and a free 127.0.0.1 port, with the flags of `npm start`
 * (collectors off unless `env` turns them on); resolves once it prints its URL.
 */
export function startAppliance(dataDir, nodeArgs = [], env = {}) {
  if (!fs.existsSync(SERVER_ENTRY))
    throw new Error(`${path.relative(ROOT, SERVER_ENTRY)} not found: run \`npm run build\` first`);
  return startChild(
    'appliance',
    [...startFlags(), ...nodeArgs, SERVER_ENTRY],
    {
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_BIND: '127.0.0.1',
      APPLIANCE_HTTPS_PORT: '0',
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
      APPLIANCE_ADMIN_PASSWORD: ADMIN_PASSWORD,
      APPLIANCE_LOG_LEVEL: 'warn',
      ...env,
    },
    /appliance listening on (https:\/\/127\.0\.0\.1:\d+)/,
  );
}

// --- /proc readings -------------------------------------------------------------------------

export function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => {
    const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`no ${key} in /proc/${pid}/status`);
    return Number(match[1]);
  };
  return { rssMb: round(kb('VmRSS') / 1024, 1), peakRssMb: round(kb('VmHWM') / 1024, 1) };
}

/** CPU seconds (user + system, all threads) the process has used so far. */
export function cpuSecondsOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Machine-wide busy CPU seconds (all cores) so far, from /proc/stat. */
export function machineBusySeconds() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - ticks[3] - ticks[4]) / CLK_TCK;
}

// --- HTTP set-up calls ----------------------------------------------------------------------

const agent = new Agent({
  connect: { rejectUnauthorized: false },
  headersTimeout: REQUEST_TIMEOUT_MS,
  bodyTimeout: REQUEST_TIMEOUT_MS,
  keepAliveTimeout: 1_000,
});

export function closeAgent() {
  return agent.destroy().catch(() => {});
}

export async function call(method, url, { token, body } = {}) {
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let payload;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await undiciRequest(url, {
    method,
    headers,
    body: payload,
    dispatcher: agent,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.body.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON; the caller checks the status and reports the text
  }
  return { status: res.statusCode, text, json };
}

/**
 * GET `url` and time it to the last byte of the body, the way load tools time a request: the body
 * is read as bytes and not decoded or parsed (parsing a 5 MB list is the client's work, not the
 * API's latency). Resolves `{status, ms, bytes, body}` (body: a Buffer).
 */
export async function timedGet(url, token) {
  const started = process.hrtime.bigint();
  const res = await undiciRequest(url, {
    method: 'GET',
    headers: { accept: 'application/json', authorization: `Bearer ${token}` },
    dispatcher: agent,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { status: res.statusCode, ms, bytes: body.length, body };
}

/** Polls POST /api/information until it answers 200 (at most 150 tries in 15 s). */
export async function waitReady(baseUrl) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  for (let attempt = 0; attempt < 150 && Date.now() < deadline; attempt++) {
    try {
      const res = await call('POST', `${baseUrl}/api/information`);
      if (res.status === 200) return;
      last = `HTTP ${res.status}: ${res.text.slice(0, 200)}`;
    } catch (err) {
      last = err.message;
    }
    await sleep(100);
  }
  throw new Error(
    `POST /api/information did not answer 200 within ${READY_TIMEOUT_MS} ms (last: ${last})`,
  );
}

/** Signs in as admin and creates a personal access token named `bench`; returns its plaintext. */
export async function bearerToken(baseUrl) {
  const login = await call('POST', `${baseUrl}/api/login`, {
    body: { email: 'admin', password: ADMIN_PASSWORD },
  });
  if (login.status !== 200 || !login.json?.access_token) {
    throw new Error(`POST /api/login failed: HTTP ${login.status} ${login.text.slice(0, 300)}`);
  }
  const created = await call('POST', `${baseUrl}/api/tokens`, {
    token: login.json.access_token,
    body: { name: 'bench' },
  });
  if (created.status !== 201 || !created.json?.access_token) {
    throw new Error(
      `POST /api/tokens failed: HTTP ${created.status} ${created.text.slice(0, 300)}`,
    );
  }
  return created.json.access_token;
}

// --- load -----------------------------------------------------------------------------------

let currentCannon = null;

/** Stops a running autocannon instance (signal handlers). */
export function stopCannon() {
  if (currentCannon) currentCannon.stop();
}

function cannon(url, headers, durationS, load) {
  return new Promise((resolve, reject) => {
    currentCannon = autocannon(
      {
        url,
        connections: load.connections,
        pipelining: load.pipelining,
        duration: durationS,
        timeout: 10,
        headers,
        // autocannon always connects with rejectUnauthorized:false; said here for the reader.
        tlsOptions: { rejectUnauthorized: false },
      },
      (err, result) => {
        currentCannon = null;
        if (err) reject(err);
        else resolve(result);
      },
    );
  });
}

/**
 * A warm-up run, then the measured run, with the server's, this process's and the rest of the
 * machine's CPU use during it. Throws on connection errors or any non-2xx answer.
 * `load`: { connections, pipelining, warmupS, durationS }.
 */
export async function measure(label, entry, url, headers, load) {
  if (load.warmupS > 0) {
    const warm = await cannon(url, headers, load.warmupS, load);
    assertAlive(entry);
    if (warm.errors > 0 || warm.non2xx > 0) {
      throw new Error(
        `${label} warm-up: ${warm.errors} connection errors, ${warm.non2xx} non-2xx (${JSON.stringify(warm.statusCodeStats)})`,
      );
    }
  }
  const serverCpuBefore = cpuSecondsOf(entry.child.pid);
  const clientCpuBefore = process.cpuUsage();
  const machineBefore = machineBusySeconds();
  const wallBefore = performance.now();
  const result = await cannon(url, headers, load.durationS, load);
  const wall = (performance.now() - wallBefore) / 1000;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const machineBusy = machineBusySeconds() - machineBefore;
  assertAlive(entry);
  const serverCpu = cpuSecondsOf(entry.child.pid) - serverCpuBefore;
  const clientCpuSeconds = (clientCpu.user + clientCpu.system) / 1e6;
  if (result.requests.total === 0) throw new Error(`${label}: no request completed`);
  if (result.errors > 0)
    throw new Error(`${label}: ${result.errors} connection errors (${result.timeouts} timeouts)`);
  if (result.non2xx > 0) {
    throw new Error(
      `${label}: ${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodeStats)}); the bench measured the wrong thing`,
    );
  }
  return {
    url,
    requestsPerSec: round(result.requests.average, 1),
    requestsTotal: result.requests.total,
    latencyMs: {
      average: result.latency.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    throughputBytesPerSec: round(result.throughput.average),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodeStats: result.statusCodeStats,
    durationS: result.duration,
    // Server CPU time per answered request: far less sensitive to a busy machine than req/s.
    serverCpuUsPerRequest: round((serverCpu / result.requests.total) * 1e6, 1),
    // Shares of one core during the run. ~100% for the server means it was the bottleneck; the
    // same for the bench process means autocannon itself was (both share the machine's cores).
    serverCpuPercent: round((serverCpu / wall) * 100),
    clientCpuPercent: round((clientCpuSeconds / wall) * 100),
    // Every other process on the machine: the figures are only comparable when this is ~0.
    otherCpuPercent: Math.max(
      0,
      round(((machineBusy - serverCpu - clientCpuSeconds) / wall) * 100),
    ),
    loadAverage1m: round(os.loadavg()[0], 2),
  };
}

// --- report ---------------------------------------------------------------------------------

export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) =>
          i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]),
        )
        .join('   '),
    )
    .join('\n');
}

// --- syslog senders ----------------------------------------------------------------------------

/**
 * Sends syslog to 127.0.0.1:`port` from `senders` processes of test/bench/syslog-sender.mjs at
 * once (the rate split between them) for `seconds`; resolves `{sent, seconds, rate}` summed.
 */
export async function sendSyslog(port, rate, seconds, senders) {
  const parts = await Promise.all(
    Array.from({ length: senders }, () => syslogSender(port, rate / senders, seconds)),
  );
  const sent = parts.reduce((n, p) => n + p.sent, 0);
  const elapsed = Math.max(...parts.map((p) => p.seconds));
  return { sent, seconds: elapsed, rate: sent / elapsed };
}

function syslogSender(port, rate, seconds) {
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
