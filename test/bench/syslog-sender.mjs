/**
 * The syslog bench's sender, a second process (test/bench/syslog.bench.mjs starts it): sends RFC
 * 5424 datagrams over UDP to 127.0.0.1:<port> at <rate> messages a second for <seconds>, paced
 * in 1 ms steps (each step sends what the schedule owes, so a late step catches up), then
 * prints one JSON line {sent, seconds, rate} on stdout. Messages carry a sequence number and,
 * one in 997, the word `needle` (the substring the list bench searches for).
 *
 *   node test/bench/syslog-sender.mjs <port> <rate> <seconds> [sourceAddress]
 */
import dgram from 'node:dgram';

const [port, rate, seconds, source = '127.0.0.1'] = process.argv.slice(2);
const target = Number(rate);
const durationMs = Number(seconds) * 1000;
const socket = dgram.createSocket('udp4');
await new Promise((resolve) => socket.bind({ address: source, port: 0 }, resolve));
socket.setSendBufferSize(4 * 1024 * 1024);

const head = `<134>1 ${new Date().toISOString()} benchhost bench - - - `;
let sent = 0;
let inFlight = 0;
const started = performance.now();
const done = () => sent;

await new Promise((resolve) => {
  const step = () => {
    const elapsed = performance.now() - started;
    if (elapsed >= durationMs) {
      resolve();
      return;
    }
    const owed = Math.min(Math.floor((elapsed / 1000) * target) - sent, 2000);
    for (let i = 0; i < owed; i++) {
      const seq = sent++;
      inFlight++;
      socket.send(
        `${head}seq=${seq} ${seq % 997 === 0 ? 'needle ' : ''}interface GigabitEthernet0/${seq % 48} changed state to up`,
        Number(port),
        '127.0.0.1',
        () => inFlight--,
      );
    }
    setImmediate(step);
  };
  step();
});
while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
const elapsedS = (performance.now() - started) / 1000;
socket.close();
process.stdout.write(
  `${JSON.stringify({ sent: done(), seconds: elapsedS, rate: done() / elapsedS })}\n`,
);
