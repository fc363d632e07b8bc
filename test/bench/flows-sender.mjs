/**
 * The flow bench's sender, a second process (test/bench/flows.bench.mjs starts it): exports flow
 * records over UDP to 127.0.0.1:<port> at <rate> records a second for <seconds>, as IPFIX
 * (observation domain 1) and NetFlow v9 (source id 2) datagrams in turn, 30 records each, with
 * the template again every 50 datagrams (as exporters refresh them), paced in 1 ms steps; then
 * prints one JSON line {sent, datagrams, seconds, rate} on stdout (sent = records).
 *
 *   node test/bench/flows-sender.mjs <port> <rate> <seconds>
 */
import dgram from 'node:dgram';

// Conversations: 4096 source hosts, each talking to one destination on one port (k % 4), with
// source ports that change on every record (so src_ports fill up to their cap of 64).

const [port, rate, seconds] = process.argv.slice(2).map(Number);
const PER_DATAGRAM = 30;
const socket = dgram.createSocket('udp4');
await new Promise((resolve) => socket.bind({ address: '127.0.0.1', port: 0 }, resolve));
socket.setSendBufferSize(4 * 1024 * 1024);

// src, dst, sport, dport, proto, packets(4), bytes(8 IPFIX / 4 v9), start, end
const IPFIX_FIELDS = [
  [8, 4],
  [12, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [2, 4],
  [1, 8],
  [152, 8],
  [153, 8],
];
const V9_FIELDS = [
  [8, 4],
  [12, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [2, 4],
  [1, 4],
  [22, 4],
  [21, 4],
];
const IPFIX_RECORD = IPFIX_FIELDS.reduce((n, f) => n + f[1], 0);
const V9_RECORD = V9_FIELDS.reduce((n, f) => n + f[1], 0);

function template(b, o, setId, id, fields) {
  b.writeUInt16BE(setId, o);
  b.writeUInt16BE(8 + fields.length * 4, o + 2);
  b.writeUInt16BE(id, o + 4);
  b.writeUInt16BE(fields.length, o + 6);
  fields.forEach(([f, l], i) => {
    b.writeUInt16BE(f, o + 8 + i * 4);
    b.writeUInt16BE(l, o + 10 + i * 4);
  });
  return o + 8 + fields.length * 4;
}

let seq = 0;
function records(b, o, n, v9, now) {
  for (let i = 0; i < n; i++) {
    const k = seq++;
    b.writeUInt32BE(((10 << 24) | (((k >> 8) & 15) << 8) | (k & 255)) >>> 0, o); // 10.0.x.y: 4096 hosts
    b.writeUInt32BE(((172 << 24) | (16 << 16) | (k % 4096)) >>> 0, o + 4);
    b.writeUInt16BE(1024 + (k % 60000), o + 8);
    b.writeUInt16BE([443, 80, 53, 22][k % 4], o + 10);
    b[o + 12] = k % 4 === 2 ? 17 : 6;
    b.writeUInt32BE(1 + (k % 50), o + 13);
    if (v9) {
      b.writeUInt32BE(64 * (1 + (k % 1500)), o + 17);
      b.writeUInt32BE(1000, o + 21); // uptime-relative: header uptime 2000 -> 1 s ago
      b.writeUInt32BE(1900, o + 25);
      o += V9_RECORD;
    } else {
      b.writeBigUInt64BE(BigInt(64 * (1 + (k % 1500))), o + 17);
      b.writeBigUInt64BE(BigInt(now - 1000), o + 25);
      b.writeBigUInt64BE(BigInt(now - 100), o + 33);
      o += IPFIX_RECORD;
    }
  }
  return o;
}

let datagrams = 0;
function datagram(n) {
  const v9 = datagrams % 2 === 1;
  const withTemplate = datagrams % 50 < 2;
  datagrams++;
  const now = Date.now();
  const b = Buffer.alloc(1500 + 64);
  let o;
  if (v9) {
    b.writeUInt16BE(9, 0);
    b.writeUInt32BE(2000, 4); // uptime ms
    b.writeUInt32BE(Math.floor(now / 1000), 8);
    b.writeUInt32BE(datagrams, 12);
    b.writeUInt32BE(2, 16);
    o = 20;
    if (withTemplate) o = template(b, o, 0, 300, V9_FIELDS);
  } else {
    b.writeUInt16BE(10, 0);
    b.writeUInt32BE(Math.floor(now / 1000), 4);
    b.writeUInt32BE(datagrams, 8);
    b.writeUInt32BE(1, 12);
    o = 16;
    if (withTemplate) o = template(b, o, 2, 256, IPFIX_FIELDS);
  }
  const setStart = o;
  b.writeUInt16BE(v9 ? 300 : 256, o);
  o = records(b, o + 4, n, v9, now);
  b.writeUInt16BE(o - setStart, setStart + 2);
  if (v9) b.writeUInt16BE(withTemplate ? 2 : 1, 2);
  else b.writeUInt16BE(o, 2);
  return b.subarray(0, o);
}

let sent = 0;
let inFlight = 0;
const t0 = performance.now();
await new Promise((resolve) => {
  const step = () => {
    const elapsed = performance.now() - t0;
    if (elapsed >= seconds * 1000) return resolve();
    let owed = Math.min(Math.floor((elapsed / 1000) * rate) - sent, 20_000);
    while (owed >= PER_DATAGRAM || (owed > 0 && elapsed >= seconds * 1000 - 5)) {
      const n = Math.min(PER_DATAGRAM, owed);
      inFlight++;
      socket.send(datagram(n), port, '127.0.0.1', () => inFlight--);
      sent += n;
      owed -= n;
    }
    setImmediate(step);
  };
  step();
});
for (let i = 0; i < 2000 && inFlight > 0; i++) await new Promise((r) => setTimeout(r, 5));
const elapsedS = (performance.now() - t0) / 1000;
socket.close();
process.stdout.write(
  `${JSON.stringify({ sent, datagrams, seconds: elapsedS, rate: sent / elapsedS })}\n`,
);
