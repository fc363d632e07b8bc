import { describe, expect, it } from 'vitest';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import { decodeIperf, iperfClientArgs, IperfRunError, type IperfRequest } from './iperf.tool.js';

const TCP: IperfRequest = {
  target: parseTarget('127.0.0.1') as Target,
  port: 5201,
  duration: 2,
  protocol: 'tcp',
  direction: 'download',
};
const UDP: IperfRequest = { ...TCP, protocol: 'udp', direction: 'upload' };
const T = '2026-11-21T20:00:00.000Z';

describe('iperf3 client', () => {
  it('builds arguments: -R for download, -u for UDP, JSON, a connect timeout', () => {
    expect(iperfClientArgs(TCP)).toEqual([
      '-c',
      '127.0.0.1',
      '-p',
      '5201',
      '-t',
      '2',
      '--json',
      '--connect-timeout',
      '5000',
      '-R',
    ]);
    expect(iperfClientArgs(UDP)).toEqual([
      '-c',
      '127.0.0.1',
      '-p',
      '5201',
      '-t',
      '2',
      '--json',
      '--connect-timeout',
      '5000',
      '-u',
    ]);
  });

  it('decodes a TCP report (receiver view, sender retransmits)', () => {
    const report = {
      start: {},
      end: {
        sum_sent: { seconds: 2.0001, bytes: 4000, bits_per_second: 16000.4, retransmits: 3 },
        sum_received: { seconds: 2.0002, bytes: 3900, bits_per_second: 15600.6 },
      },
    };
    expect(decodeIperf(JSON.stringify(report), TCP, T)).toEqual({
      host: '127.0.0.1',
      port: 5201,
      protocol: 'tcp',
      direction: 'download',
      duration: 2,
      bytes: 3900,
      bits_per_second: 15601,
      sent_bytes: 4000,
      sent_bits_per_second: 16000,
      retransmits: 3,
      jitter_ms: null,
      lost_packets: null,
      lost_percent: null,
      timestamp: T,
    });
  });

  it('decodes a UDP report of iperf 3.12 (sum_received) and of older releases (sum only)', () => {
    const received = {
      seconds: 1.03,
      bytes: 131072,
      bits_per_second: 1018015.18,
      jitter_ms: 0.0073,
      lost_packets: 0,
      packets: 4,
      lost_percent: 0,
    };
    const modern = {
      end: {
        sum: { ...received, bits_per_second: 1040498.6 },
        sum_sent: { ...received, bits_per_second: 1040498.6 },
        sum_received: received,
      },
    };
    expect(decodeIperf(JSON.stringify(modern), UDP, T)).toMatchObject({
      bits_per_second: 1018015,
      jitter_ms: 0.0073,
      lost_packets: 0,
      lost_percent: 0,
      retransmits: null,
      sent_bits_per_second: 1040499,
    });
    const old = { end: { sum: received } };
    expect(decodeIperf(JSON.stringify(old), UDP, T)).toMatchObject({
      bits_per_second: 1018015,
      bytes: 131072,
      jitter_ms: 0.0073,
    });
  });

  it('turns an error report or unreadable output into IperfRunError', () => {
    expect(() =>
      decodeIperf(
        JSON.stringify({
          start: {},
          end: {},
          error: 'unable to connect to server: Connection refused',
        }),
        TCP,
        T,
      ),
    ).toThrow(new IperfRunError('iperf3: unable to connect to server: Connection refused'));
    expect(() => decodeIperf('iperf3: error', TCP, T)).toThrow('iperf3 output could not be read');
    expect(() => decodeIperf(JSON.stringify({ end: {} }), TCP, T)).toThrow(
      'iperf3 report has no result',
    );
  });
});
