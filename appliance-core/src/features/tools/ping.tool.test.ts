import { describe, expect, it } from 'vitest';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import {
  parsePingAverage,
  parsePingHeader,
  parsePingReply,
  parsePingSummary,
  pingArgs,
  pingOnce,
  streamPing,
} from './ping.tool.js';
import { runEventStream } from '../../platform/http/define-route.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { recordingStream, ScriptedRunner } from './testing/scripted-runner.js';

const IPV4_RUN = `PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.541 ms
64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.022 ms

--- 127.0.0.1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 927ms
rtt min/avg/max/mdev = 0.022/0.281/0.541/0.259 ms`;

describe('ping output', () => {
  it('reads replies (IPv4, IPv6, whole-millisecond forms)', () => {
    expect(parsePingReply('64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.541 ms')).toEqual({
      icmp_seq: 1,
      latency: 0.541,
    });
    expect(parsePingReply('64 bytes from ::1: icmp_seq=12 ttl=64 time=0.035 ms')).toEqual({
      icmp_seq: 12,
      latency: 0.035,
    });
    expect(parsePingReply('64 bytes from 10.0.0.1: icmp_seq=3 ttl=63 time=12 ms')).toEqual({
      icmp_seq: 3,
      latency: 12,
    });
    expect(parsePingReply('64 bytes from 10.0.0.1: icmp_seq=3 ttl=63 time<1 ms')).toEqual({
      icmp_seq: 3,
      latency: 1,
    });
    expect(parsePingReply('From 10.0.0.1 icmp_seq=4 Destination Host Unreachable')).toBeNull();
    expect(parsePingReply('no answer yet for icmp_seq=5')).toBeNull();
  });

  it('reads the summary, with or without errors', () => {
    expect(
      parsePingSummary('10 packets transmitted, 10 received, 0% packet loss, time 9013ms'),
    ).toEqual({ total_transmitted: 10, total_received: 10, packet_loss: 0 });
    expect(
      parsePingSummary(
        '10 packets transmitted, 0 received, +10 errors, 100% packet loss, time 9013ms',
      ),
    ).toEqual({ total_transmitted: 10, total_received: 0, packet_loss: 100 });
    expect(
      parsePingSummary('4 packets transmitted, 3 received, 25% packet loss, time 3004ms'),
    ).toEqual({ total_transmitted: 4, total_received: 3, packet_loss: 25 });
    expect(
      parsePingSummary('3 packets transmitted, 1 packets received, 66.6667% packet loss'),
    ).toEqual({ total_transmitted: 3, total_received: 1, packet_loss: 66.6667 });
    expect(parsePingSummary('--- 127.0.0.1 ping statistics ---')).toBeNull();
  });

  it('reads the resolved address and the average', () => {
    expect(parsePingHeader('PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.')).toBe('127.0.0.1');
    expect(parsePingHeader('PING localhost (127.0.0.1) 56(84) bytes of data.')).toBe('127.0.0.1');
    expect(parsePingHeader('PING ::1(::1) 56 data bytes')).toBe('::1');
    expect(parsePingHeader('PING router.example(2001:db8::1) 56 data bytes')).toBe('2001:db8::1');
    expect(parsePingAverage('rtt min/avg/max/mdev = 0.022/0.281/0.541/0.259 ms')).toBe(0.281);
    expect(parsePingAverage('round-trip min/avg/max/stddev = 1.1/2.2/3.3/0.4 ms')).toBe(2.2);
    const lines = IPV4_RUN.split('\n');
    expect(lines.map(parsePingReply).filter(Boolean)).toHaveLength(2);
  });

  it('builds the argument list with the target after --', () => {
    expect(pingArgs(parseTarget('router.example') as Target, 10, 1)).toEqual([
      '-n',
      '-c',
      '10',
      '-i',
      '1',
      '-W',
      '2',
      '--',
      'router.example',
    ]);
  });
});

// --- the tool with a scripted runner (outcomes loopback cannot produce) ---------------------------

describe('ping tool outcomes', () => {
  const target = parseTarget('192.0.2.1') as Target;

  it('JSON ping without any reply: status false, latency null', async () => {
    const runner = new ScriptedRunner({
      code: 1,
      lines: [
        'PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data.',
        '',
        '--- 192.0.2.1 ping statistics ---',
        '4 packets transmitted, 0 received, 100% packet loss, time 3062ms',
      ],
    });
    expect(await pingOnce(runner, target)).toEqual({
      address: '192.0.2.1',
      latency: null,
      status: false,
      hostname: '192.0.2.1',
    });
  });

  it('JSON ping with some replies averages and rounds them', async () => {
    const runner = new ScriptedRunner({
      lines: [
        'PING h.example (192.0.2.9) 56(84) bytes of data.',
        '64 bytes from 192.0.2.9: icmp_seq=1 ttl=60 time=10.4 ms',
        '64 bytes from 192.0.2.9: icmp_seq=3 ttl=60 time=11.2 ms',
        '4 packets transmitted, 2 received, 50% packet loss, time 3004ms',
        'rtt min/avg/max/mdev = 10.400/10.800/11.200/0.400 ms',
      ],
    });
    expect(await pingOnce(runner, parseTarget('h.example') as Target)).toEqual({
      address: '192.0.2.9',
      latency: 11,
      status: true,
      hostname: 'h.example',
    });
  });

  it('JSON ping that reported nothing fails with what ping said', async () => {
    const runner = new ScriptedRunner({
      code: 2,
      stderr: 'ping: nowhere.example: Name or service not known\n',
    });
    const failed = pingOnce(runner, target);
    await expect(failed).rejects.toBeInstanceOf(ToolFailure);
    await expect(failed).rejects.toThrow('ping: nowhere.example: Name or service not known');
    const slow = new ScriptedRunner({ code: null, signal: 'SIGTERM', timedOut: true });
    await expect(pingOnce(slow, target)).rejects.toThrow('ping did not finish within 10 seconds');
  });

  it('the stream sends an error event when ping ends without a summary, and always closes', async () => {
    const { stream, frames, isClosed } = recordingStream();
    const runner = new ScriptedRunner({
      code: 2,
      stderr: 'ping: connect: Network is unreachable\n',
    });
    // As the route runs it: the one event-stream helper reports the failure and ends the stream.
    await runEventStream(stream, () => streamPing(runner, target, stream));
    expect(frames).toEqual([
      { data: { message: 'ping: connect: Network is unreachable' }, event: 'error' },
    ]);
    expect(isClosed()).toBe(true);
  });

  it('the stream reports a lossy run: frames for replies only, then the summary', async () => {
    const { stream, frames } = recordingStream();
    const lines = [
      'PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data.',
      '64 bytes from 192.0.2.1: icmp_seq=2 ttl=60 time=5.5 ms',
      '10 packets transmitted, 1 received, 90% packet loss, time 9100ms',
    ];
    await streamPing(new ScriptedRunner({ code: 1, lines }), target, stream);
    expect(frames).toEqual([
      { data: { icmp_seq: 2, latency: 5.5, summary: null }, event: undefined },
      {
        data: { summary: { total_transmitted: 10, total_received: 1, packet_loss: 90 } },
        event: undefined,
      },
    ]);
  });
});
