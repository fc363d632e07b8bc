/**
 * The filter compiler: every accepted filter compiles to an expression libpcap accepts (checked
 * with `dumpcap -d`, which compiles the expression for the loopback interface), and injection
 * attempts in hosts and ifaces (`1.2.3.4 or port 22`, `;id`, `$(id)`, a leading `-`) are refused
 * and never reach the expression.
 */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileFilter,
  filterErrors,
  PROTOCOLS,
  type CaptureFilter,
} from './capture-filter.rules.js';

/** Does libpcap (through dumpcap) compile the expression for lo? */
function libpcapAccepts(expression: string): boolean {
  try {
    execFileSync('dumpcap', ['-d', '-i', 'lo', '-f', expression], {
      stdio: 'ignore',
      timeout: 5000,
    });
    return true;
  } catch {
    return false;
  }
}

const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6();
const validFilter: fc.Arbitrary<CaptureFilter> = fc.record(
  {
    hosts: fc.array(fc.oneof(ipv4, ipv6), { maxLength: 4 }),
    ports: fc.array(fc.integer({ min: 1, max: 65535 }), { maxLength: 4 }),
    protocols: fc.subarray([...PROTOCOLS]),
    vlans: fc.array(fc.integer({ min: 0, max: 4095 }), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);

const INJECTIONS = [
  '1.2.3.4 or port 22',
  ';id',
  '$(id)',
  '`id`',
  '-w/etc/passwd',
  '--version',
  '1.2.3.4\nport 22',
  '1.2.3.4 ',
  ' 1.2.3.4',
  '',
  'lo; rm -rf /',
  '../../etc',
];

describe('compileFilter', () => {
  it('compiles the empty filter to the empty expression (capture everything)', () => {
    expect(compileFilter({})).toBe('');
  });

  it('joins OR groups with AND, vlan first, icmp covering ICMPv6, the device address as a group', () => {
    expect(
      compileFilter(
        {
          hosts: ['10.0.0.1', '::1'],
          ports: [22, 22, 443],
          protocols: ['tcp', 'icmp'],
          vlans: [7],
        },
        '192.0.2.9',
      ),
    ).toBe(
      'vlan 7 and host 192.0.2.9 and (host 10.0.0.1 or host ::1) and (port 22 or port 443) and (tcp or icmp or icmp6)',
    );
  });

  it('every accepted filter compiles to an expression libpcap accepts', () => {
    fc.assert(
      fc.property(validFilter, fc.option(ipv4, { nil: undefined }), (filter, device) => {
        expect(filterErrors(filter)).toEqual({});
        const expression = compileFilter(filter, device);
        expect(libpcapAccepts(expression === '' ? 'ip or not ip' : expression)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('refuses injection attempts in hosts and ifaces; they never reach the expression', () => {
    for (const bad of INJECTIONS) {
      expect(Object.keys(filterErrors({ hosts: [bad] }))).toEqual(['filter.hosts.0']);
      expect(() => compileFilter({ hosts: [bad] })).toThrow();
      if (bad !== '' && !/^[A-Za-z0-9_][A-Za-z0-9_.:@-]*$/.test(bad))
        expect(Object.keys(filterErrors({ ifaces: [bad] }))).toEqual(['filter.ifaces.0']);
    }
    expect(filterErrors({ ifaces: ['-i'] })).toHaveProperty(['filter.ifaces.0']);
    expect(filterErrors({ ifaces: ['x'.repeat(33)] })).toHaveProperty(['filter.ifaces.0']);
    expect(filterErrors({ ifaces: ['eth0.100', 'lo', 'br-lan', 'wlan0'] })).toEqual({});
  });

  it('refuses random strings that are not IP addresses, and out-of-range numbers', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        const errors = filterErrors({ hosts: [text] });
        if (Object.keys(errors).length === 0)
          expect(compileFilter({ hosts: [text] })).toMatch(/^host [0-9a-f.:]+$/);
      }),
      { numRuns: 2000 },
    );
    expect(filterErrors({ ports: [0, 65536, 1.5] })).toHaveProperty(['filter.ports.2']);
    expect(filterErrors({ vlans: [-1, 4096] })).toHaveProperty(['filter.vlans.1']);
    expect(filterErrors({ protocols: ['sctp'] })).toHaveProperty(['filter.protocols.0']);
  });
});
