import { describe, expect, it } from 'vitest';
import { hostChunks, hostCount, ipv4ToNumber, numberToIpv4 } from './ipv4.rules.js';

describe('IPv4 ranges', () => {
  it('parses dotted quads only', () => {
    expect(ipv4ToNumber('127.0.0.1')).toBe(2130706433);
    expect(ipv4ToNumber('0.0.0.0')).toBe(0);
    expect(ipv4ToNumber('255.255.255.255')).toBe(4294967295);
    for (const bad of [
      '256.0.0.1',
      '1.2.3',
      '01.2.3.4',
      '1.2.3.4 ',
      '::1',
      '1.2.3.4/24',
      '',
      '-1.2.3.4',
    ])
      expect(ipv4ToNumber(bad), bad).toBeNull();
    expect(numberToIpv4(4294967295)).toBe('255.255.255.255');
    expect(numberToIpv4(ipv4ToNumber('10.20.30.40') as number)).toBe('10.20.30.40');
  });

  it('sweeps the hosts of a range: network and broadcast excluded, except in a /31 or /32', () => {
    const all = (network: string, broadcast: string, size = 256) => [
      ...hostChunks(ipv4ToNumber(network) as number, ipv4ToNumber(broadcast) as number, size),
    ];
    expect(all('127.0.0.0', '127.0.0.15').flat()).toEqual(
      Array.from({ length: 14 }, (_, i) => `127.0.0.${i + 1}`),
    );
    expect(all('127.0.0.8', '127.0.0.9').flat()).toEqual(['127.0.0.8', '127.0.0.9']);
    expect(all('127.0.0.8', '127.0.0.8').flat()).toEqual(['127.0.0.8']);
    expect(all('127.0.0.0', '127.0.0.15', 5).map((c) => c.length)).toEqual([5, 5, 4]);
    expect(
      hostCount(ipv4ToNumber('127.0.0.0') as number, ipv4ToNumber('127.0.0.15') as number),
    ).toBe(14);
  });

  it('walks a /16 in chunks without building one list of 65536 addresses', () => {
    const chunks = hostChunks(
      ipv4ToNumber('127.10.0.0') as number,
      ipv4ToNumber('127.10.255.255') as number,
      256,
    );
    let total = 0;
    let largest = 0;
    let first = '';
    let last = '';
    for (const chunk of chunks) {
      total += chunk.length;
      largest = Math.max(largest, chunk.length);
      first ||= chunk[0] as string;
      last = chunk.at(-1) as string;
    }
    expect({ total, largest, first, last }).toEqual({
      total: 65534,
      largest: 256,
      first: '127.10.0.1',
      last: '127.10.255.254',
    });
  });
});
