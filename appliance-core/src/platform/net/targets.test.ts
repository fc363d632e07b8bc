import { describe, expect, it } from 'vitest';
import {
  addressBytes,
  classifyAddress,
  isGloballyRoutable,
  isHostname,
  isIpLiteral,
  isLoopback,
  ipVersion,
  parseTarget,
} from './targets.js';

describe('parseTarget', () => {
  it('accepts IPv4 and IPv6 literals', () => {
    expect(parseTarget('127.0.0.1')).toEqual({ value: '127.0.0.1', kind: 'ipv4' });
    expect(parseTarget('::1')).toEqual({ value: '::1', kind: 'ipv6' });
    expect(parseTarget('2001:DB8::1')).toEqual({ value: '2001:db8::1', kind: 'ipv6' });
    expect(parseTarget('::ffff:127.0.0.1')).toEqual({ value: '::ffff:127.0.0.1', kind: 'ipv6' });
  });

  it('accepts RFC 1123 host names, lower-cased, without a trailing dot', () => {
    expect(parseTarget('localhost')).toEqual({ value: 'localhost', kind: 'hostname' });
    expect(parseTarget('Router-1.Example.NET.')).toEqual({
      value: 'router-1.example.net',
      kind: 'hostname',
    });
    expect(parseTarget('1st.example')).toEqual({ value: '1st.example', kind: 'hostname' });
    expect(parseTarget(`${'a'.repeat(63)}.example`)?.kind).toBe('hostname');
  });

  it.each([
    ['an option', '-oX /tmp/x'],
    ['a bare option', '-v'],
    ['shell syntax', '127.0.0.1;id'],
    ['command substitution', '$(id)'],
    ['backticks', '`id`'],
    ['a pipe', 'a|b'],
    ['a space', 'host name'],
    ['a newline', 'host\nname'],
    ['a NUL byte', 'host\u0000'],
    ['an empty string', ''],
    ['a label starting with a hyphen', 'a.-b.example'],
    ['a label ending with a hyphen', 'a-.example'],
    ['an underscore', 'under_score.example'],
    ['a label over 63 characters', `${'a'.repeat(64)}.example`],
    ['a name over 253 characters', `${'abcdefghi.'.repeat(25)}example`],
    ['an empty label', 'a..b'],
    ['a numeric last label (127.1)', '127.1'],
    ['a decimal address', '2130706433'],
    ['a hexadecimal address', '0x7f.0.0.1'],
    ['leading zeros', '127.000.000.001'],
    ['an IPv6 zone index', 'fe80::1%eth0'],
    ['brackets', '[::1]'],
    ['a URL', 'http://example.com'],
    ['a port', '127.0.0.1:80'],
    ['a CIDR', '10.0.0.0/8'],
    ['a non-ASCII name', 'exämple.com'],
  ])('refuses %s', (_what, input) => {
    expect(parseTarget(input)).toBeNull();
  });

  it('refuses non-strings', () => {
    expect(parseTarget(undefined)).toBeNull();
    expect(parseTarget(42)).toBeNull();
    expect(parseTarget(['127.0.0.1'])).toBeNull();
  });

  it('never yields a value that begins with a hyphen', () => {
    for (const input of ['-', '--', '-1', '-a.example', '-::1', '--help', '-c 1'])
      expect(parseTarget(input)).toBeNull();
  });
});

describe('helpers', () => {
  it('ipVersion and isIpLiteral', () => {
    expect(ipVersion('10.0.0.1')).toBe(4);
    expect(ipVersion('fe80::1')).toBe(6);
    expect(ipVersion('fe80::1%lo')).toBe(0);
    expect(ipVersion('example.com')).toBe(0);
    expect(isIpLiteral('1.1.1.1')).toBe(true);
    expect(isIpLiteral('1.1.1')).toBe(false);
    expect(isHostname('a.b')).toBe(true);
    expect(isHostname('a.1')).toBe(false);
  });

  it('addressBytes expands IPv6 shorthand and embedded IPv4', () => {
    expect(Array.from(addressBytes('1.2.3.4')!)).toEqual([1, 2, 3, 4]);
    expect(Array.from(addressBytes('::1')!)).toEqual([...new Array(15).fill(0), 1]);
    expect(Array.from(addressBytes('::ffff:1.2.3.4')!)).toEqual([
      ...new Array(10).fill(0),
      255,
      255,
      1,
      2,
      3,
      4,
    ]);
    expect(Array.from(addressBytes('2001:db8:1::ab')!)).toEqual([
      0x20,
      1,
      0x0d,
      0xb8,
      0,
      1,
      ...new Array(9).fill(0),
      0xab,
    ]);
    expect(Array.from(addressBytes('1:2:3:4:5:6:7:8')!)).toEqual([
      0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8,
    ]);
    expect(addressBytes('nope')).toBeNull();
  });
});

describe('classifyAddress (geoip accepts only globally routable addresses)', () => {
  it.each([
    ['8.8.8.8', 'global'],
    ['1.1.1.1', 'global'],
    ['100.63.255.255', 'global'],
    ['100.128.0.0', 'global'],
    ['172.32.0.1', 'global'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.127.255.255', 'carrier-grade-nat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.10.1', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['2001:4860:4860::8888', 'global'],
    ['2606:4700::1111', 'global'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'reserved'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['2002:c000:0201::1', 'reserved'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:8.8.8.8', 'global'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'global'],
    ['64:ff9b:1::1', 'reserved'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
    expect(isGloballyRoutable(ip)).toBe(kind === 'global');
  });

  it('is null for non-IP input', () => {
    expect(classifyAddress('example.com')).toBeNull();
    expect(isGloballyRoutable('example.com')).toBe(false);
  });

  it('isLoopback', () => {
    expect(isLoopback('127.0.0.2')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('8.8.8.8')).toBe(false);
  });
});
