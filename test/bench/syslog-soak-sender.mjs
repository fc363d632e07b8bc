/**
 * The syslog soak's sender, a second process (appliance-core/src/features/logs/syslog.soak.test.ts
 * starts it): sends valid RFC 5424 datagrams (app-name `soakvalid`, message `<label> <seq>`) at
 * <validRate> a second and, mixed in, malformed ones at <malformedRate> a second to
 * 127.0.0.1:<port> for <seconds>, paced in 1 ms steps, then prints one JSON line
 * {valid, malformed, seconds} on stdout.
 *
 * The malformed mix, deterministic (a seeded generator): random bytes (invalid UTF-8 included),
 * no `<PRI>`, PRI above 191, an unterminated PRI, an empty datagram, NUL and control bytes,
 * truncated RFC 5424 headers, a 60 KB datagram, and header fields far over their RFC limits.
 * None starts with a valid `<PRI>` followed by a version or a month, so each is stored raw.
 *
 *   node test/bench/syslog-soak-sender.mjs <port> <validRate> <malformedRate> <seconds> <label>
 */
import dgram from 'node:dgram';

const [port, validRate, malformedRate, seconds, label = 'soak'] = process.argv.slice(2);
const durationMs = Number(seconds) * 1000;
const socket = dgram.createSocket('udp4');
await new Promise((resolve) => socket.bind({ address: '127.0.0.1', port: 0 }, resolve));
socket.setSendBufferSize(4 * 1024 * 1024);

let seed = 0x2545f491;
const random = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x1_0000_0000;
};
const bytes = (n) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
const big = Buffer.alloc(60_000, 0x41);
const KINDS = [
  () => Buffer.concat([Buffer.from('x'), bytes(1 + Math.floor(random() * 400))]),
  () => Buffer.from(`no pri at all ${Math.floor(random() * 1e9)}`),
  () => Buffer.from(`<${192 + Math.floor(random() * 800)}>1 - - - - - - too high`),
  () => Buffer.from('<13'),
  () => Buffer.alloc(0),
  () => Buffer.from([0, 1, 2, 3, 0x1b, 0x5b, 0x32, 0x4a, 0, 0xff, 0xfe]),
  () => Buffer.from('<>1 2026-11-26T'),
  () => Buffer.concat([Buffer.from('<999999999999>'), big]),
  () => Buffer.from(`<abc>${'H'.repeat(2000)} ${'A'.repeat(5000)}`),
  () => Buffer.concat([Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1]), bytes(64)]),
];

let valid = 0;
let malformed = 0;
let inFlight = 0;
const started = performance.now();
const sent = () => inFlight--;
await new Promise((resolve) => {
  const step = () => {
    const elapsed = performance.now() - started;
    if (elapsed >= durationMs) {
      resolve();
      return;
    }
    const owedValid = Math.min(Math.floor((elapsed / 1000) * Number(validRate)) - valid, 2000);
    const owedBad = Math.min(
      Math.floor((elapsed / 1000) * Number(malformedRate)) - malformed,
      2000,
    );
    for (let i = 0; i < Math.max(owedValid, owedBad); i++) {
      if (i < owedValid) {
        inFlight++;
        socket.send(
          `<134>1 ${new Date().toISOString()} soakhost soakvalid - - - ${label} ${valid++}`,
          Number(port),
          '127.0.0.1',
          sent,
        );
      }
      if (i < owedBad) {
        inFlight++;
        const payload = KINDS[malformed++ % KINDS.length]();
        socket.send(payload, Number(port), '127.0.0.1', sent);
      }
    }
    setImmediate(step);
  };
  step();
});
for (let i = 0; i < 2000 && inFlight > 0; i++) await new Promise((r) => setTimeout(r, 5));
socket.close();
process.stdout.write(
  `${JSON.stringify({ valid, malformed, seconds: (performance.now() - started) / 1000 })}\n`,
);
