/**
 * Packet capture benchmark (issue 16), loopback only: `BENCH=capture npm run bench` (after
 * `npm run build`).
 *
 * For each engine (dumpcap, cap) and each rate of BENCH_CAPTURE_RATES (packets per second,
 * default 50000,100000,200000): starts the engine on `lo` with the filter `udp and port <P>`
 * (P a free port of an iperf3 server started here, so other traffic on lo does not count),
 * sends 60-byte frames (18-byte UDP payloads: 14 Ethernet + 20 IPv4 + 8 UDP + 18) for
 * BENCH_CAPTURE_DURATION_S (default 30) seconds with trafgen (Debian netsniff-ng, paced
 * `-b <rate>pps`; used when installed and running as root) or else `iperf3 -u -l 18
 * -b <rate*18*8>` (BENCH_CAPTURE_SENDER=iperf3 forces it; it tops out near 40,000/s here), stops the
 * engine, and counts the Enhanced Packet Blocks of the file with the appliance's own splitter.
 * Reports sent (iperf3's packet count), captured, drops (dumpcap's counter; sent minus captured
 * for cap), the rate achieved, and the engine's CPU per 100,000 packets (dumpcap: the child's
 * utime+stime from /proc; cap: this process's CPU, which also holds the engine's JavaScript).
 * Stops climbing an engine's ladder after its first rate with loss. Every run is bounded
 * (duration + 15 s). Writes test/bench/results/capture-latest.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { intEnv, log, machineInfo, RESULTS_DIR, round, sleep } from './lib.mjs';

const DIST = '../../appliance-core/dist/features/captures';
const FRAME_BYTES = 60;
const PAYLOAD = FRAME_BYTES - 42;

async function freePort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

function childCpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * Runs iperf3 as a UDP sender for `seconds` at `pps`; answers the packets it sent. Asynchronous:
 * the cap engine captures on this process's event loop, which a synchronous spawn would block.
 */
async function sendIperf(port, pps, seconds) {
  const bits = pps * PAYLOAD * 8;
  const child = spawn(
    'iperf3',
    [
      '-c',
      '127.0.0.1',
      '-p',
      String(port),
      '-u',
      '-l',
      String(PAYLOAD),
      '-b',
      String(bits),
      '-t',
      String(seconds),
      '-J',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 15) * 1000);
  const code = await new Promise((r) => child.once('exit', r));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`iperf3 client failed: ${err || out.slice(0, 300)}`);
  const json = JSON.parse(out);
  return json.end?.sum?.packets ?? json.end?.sum_sent?.packets ?? 0;
}

/** Whether trafgen (Debian netsniff-ng) can send here: installed, and this process may open packet sockets. */
function trafgenUsable() {
  if (process.env.BENCH_CAPTURE_SENDER === 'iperf3') return false;
  const found = ['/usr/sbin/trafgen', '/usr/bin/trafgen'].some((p) => fs.existsSync(p));
  return found && process.getuid?.() === 0;
}

/**
 * Sends `pps * seconds` 60-byte UDP frames to 127.0.0.1:`port` on `lo` with trafgen (netsniff-ng's
 * packet-socket generator, paced with `-b <pps>pps` on one CPU): iperf3's UDP sender could not pass
 * about 40,000 packets/s here, trafgen reaches several hundred thousand. Answers the packets trafgen
 * reports sent and the wall-clock seconds it took.
 */
async function sendTrafgen(port, pps, seconds, dir) {
  const conf = path.join(dir, 'udp.cfg');
  fs.writeFileSync(
    conf,
    `{ eth(da=00:00:00:00:00:00, sa=00:00:00:00:00:00), ipv4(saddr=127.0.0.1, daddr=127.0.0.1, ttl=64), udp(sp=40000, dp=${port}), fill(0x41, ${PAYLOAD}) }\n`,
  );
  const count = pps * seconds;
  const started = performance.now();
  const child = spawn(
    'trafgen',
    [
      '--dev',
      'lo',
      '--conf',
      conf,
      '-n',
      String(count),
      '-b',
      `${pps}pps`,
      '-P',
      '1',
      '--no-sock-mem',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 15) * 1000);
  const code = await new Promise((r) => child.once('exit', r));
  clearTimeout(timer);
  const elapsed = (performance.now() - started) / 1000;
  const match = /(\d+) packets outgoing/.exec(out);
  if (code !== 0 || !match) throw new Error(`trafgen failed (${code}): ${out.slice(-300)}`);
  return { sent: Number(match[1]), seconds: elapsed };
}

async function send(port, pps, seconds, dir) {
  if (trafgenUsable())
    return { ...(await sendTrafgen(port, pps, seconds, dir)), sender: 'trafgen' };
  const started = performance.now();
  const sent = await sendIperf(port, pps, seconds);
  return { sent, seconds: (performance.now() - started) / 1000, sender: 'iperf3' };
}

async function runOnce(engine, splitBlocks, port, pps, seconds, dir) {
  const file = path.join(dir, `${engine.name}-${pps}.pcapng`);
  fs.rmSync(file, { force: true });
  const cpuBefore = process.cpuUsage();
  const run = await engine.start({
    ifaces: ['lo'],
    bpf: `udp and port ${port}`,
    file,
    byteCap: 1073741824,
  });
  const childCpuStart = run.pid ? childCpuSeconds(run.pid) : null;
  const sending = await send(port, pps, seconds, dir);
  const sent = sending.sent;
  await sleep(500);
  const childCpuEnd = run.pid ? childCpuSeconds(run.pid) : null;
  const exit = await run.stop();
  const cpu = process.cpuUsage(cpuBefore);
  const data = fs.readFileSync(file);
  const split = splitBlocks(data, 0, null);
  const captured = split.blocks.filter((b) => b.type === 6).length;
  fs.rmSync(file, { force: true });
  const engineCpu =
    run.pid && childCpuStart !== null && childCpuEnd !== null
      ? childCpuEnd - childCpuStart
      : (cpu.user + cpu.system) / 1e6;
  const drops = exit.drops ?? Math.max(0, sent - captured);
  return {
    engine: engine.name,
    rate: pps,
    seconds,
    sent,
    captured,
    drops,
    drops_source: exit.drops === null ? 'sent minus captured' : 'engine counter',
    loss_pct: sent > 0 ? round((100 * Math.max(0, sent - captured)) / sent, 3) : 0,
    achieved_pps: round(sent / sending.seconds),
    sender: sending.sender,
    cpu_s_per_100k: captured > 0 ? round((engineCpu * 100_000) / captured, 3) : null,
    file_error: split.error?.code ?? null,
  };
}

export async function runCaptureBench() {
  const rates = (process.env.BENCH_CAPTURE_RATES ?? '50000,100000,200000')
    .split(',')
    .map((x) => Number(x.trim()))
    .filter((x) => Number.isInteger(x) && x > 0 && x <= 1_000_000);
  const seconds = intEnv('BENCH_CAPTURE_DURATION_S', 30, 1, 60);
  const { DumpcapEngine } = await import(`${DIST}/dumpcap.runtime.js`);
  const { CapEngine } = await import(`${DIST}/cap.runtime.js`);
  const { splitBlocks } = await import(`${DIST}/pcapng.rules.js`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capture-bench-'));
  const port = await freePort();
  const server = spawn('iperf3', ['-s', '-B', '127.0.0.1', '-p', String(port)], {
    stdio: 'ignore',
  });
  await sleep(500);
  const results = [];
  try {
    for (const engine of [new DumpcapEngine(), new CapEngine()]) {
      const cause = await engine.unusable();
      if (cause) {
        log(`capture bench: ${engine.name} unusable: ${cause}`);
        results.push({ engine: engine.name, unusable: cause });
        continue;
      }
      for (const pps of rates) {
        const row = await runOnce(engine, splitBlocks, port, pps, seconds, dir);
        results.push(row);
        log(
          `capture bench: ${row.engine} ${pps} pkt/s for ${seconds}s: sent ${row.sent}, captured ${row.captured}, drops ${row.drops} (${row.drops_source}), ` +
            `loss ${row.loss_pct} %, achieved ${row.achieved_pps} pkt/s, CPU ${row.cpu_s_per_100k} s per 100k packets`,
        );
        if (row.loss_pct > 0 || row.drops > 0) break;
        await sleep(500);
      }
    }
  } finally {
    server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(RESULTS_DIR, 'capture-latest.json'),
    JSON.stringify(
      { at: new Date().toISOString(), machine: machineInfo(), seconds, results },
      null,
      2,
    ),
  );
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runCaptureBench());
