import { describe, expect, it } from 'vitest';
import {
  canonicalIp,
  checkRegistrationKey,
  hostMapName,
  hostnameErrors,
  isInterfaceName,
  isIPv4,
  isZoneName,
  netmaskPrefix,
  parseIPv4WithPrefix,
  parseManualTime,
  parseNtpServers,
  prefixToNetmask,
} from './settings.rules.js';
import { INJECTIONS, validKey } from './testing/injections.js';

describe('interface names', () => {
  it('takes at most 15 letters, digits, _ . - not starting with - or .', () => {
    for (const name of ['eth0', 'lo', 'br-lan', 'enp0s31f6', 'wlan0.100', 'a_b', 'x'.repeat(15)])
      expect(isInterfaceName(name), name).toBe(true);
    for (const name of [
      '',
      'x'.repeat(16),
      '.',
      '..',
      '-eth0',
      'eth 0',
      'eth0/1',
      'é',
      ...INJECTIONS,
    ])
      expect(isInterfaceName(name), name).toBe(false);
    expect(isInterfaceName(7)).toBe(false);
  });
});

describe('addresses', () => {
  it('reads IPv4 and IPv4/CIDR, refusing leading zeros, bad prefixes and injections', () => {
    expect(parseIPv4WithPrefix('192.0.2.10')).toEqual({ address: '192.0.2.10', prefix: null });
    expect(parseIPv4WithPrefix('192.0.2.10/24')).toEqual({ address: '192.0.2.10', prefix: 24 });
    for (const bad of [
      '192.0.2.256',
      '192.0.2.010',
      '192.0.2.1/33',
      '192.0.2.1/024',
      '192.0.2.1/24/1',
      '::1',
      ...INJECTIONS,
      '192.0.2.1;id',
    ])
      expect(parseIPv4WithPrefix(bad), bad).toBeNull();
    expect(isIPv4('10.0.0.1')).toBe(true);
    expect(isIPv4('010.0.0.1')).toBe(false);
  });

  it('accepts contiguous netmasks only and converts prefixes both ways', () => {
    expect(netmaskPrefix('255.255.255.0')).toBe(24);
    expect(netmaskPrefix('255.255.255.255')).toBe(32);
    expect(netmaskPrefix('0.0.0.0')).toBe(0);
    expect(netmaskPrefix('255.0.255.0')).toBeNull();
    expect(netmaskPrefix('255.255.255.1')).toBeNull();
    expect(netmaskPrefix('24')).toBeNull();
    for (let p = 0; p <= 32; p++) expect(netmaskPrefix(prefixToNetmask(p))).toBe(p);
  });

  it('canonicalises host map addresses and refuses zones and junk', () => {
    expect(canonicalIp('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(canonicalIp('192.0.2.1')).toBe('192.0.2.1');
    for (const bad of ['fe80::1%eth0', 'example.com', ...INJECTIONS])
      expect(canonicalIp(bad)).toBeNull();
  });
});

describe('hostname', () => {
  it('requires a DNS name of at most 255 characters', () => {
    expect(hostnameErrors('appliance')).toEqual([]);
    expect(hostnameErrors('nms-01.example.net')).toEqual([]);
    expect(hostnameErrors('')).toEqual(['The hostname field is required.']);
    expect(hostnameErrors(undefined)).toEqual(['The hostname field is required.']);
    expect(hostnameErrors(12)).toEqual(['The hostname must be a string.']);
    expect(hostnameErrors('a'.repeat(256))[0]).toMatch(/255/);
    for (const bad of [
      '-lead',
      'trail-',
      'under_score',
      'a..b',
      'x'.repeat(64),
      'sp ace',
      ...INJECTIONS,
    ])
      expect(hostnameErrors(bad).length, JSON.stringify(bad.slice(0, 20))).toBe(1);
  });

  it('host map names: fqdn needs two labels; lower-cased, trailing dot dropped', () => {
    expect(hostMapName('Core-SW.example.NET.', 'fqdn')).toBe('core-sw.example.net');
    expect(hostMapName('core', 'fqdn')).toBeNull();
    expect(hostMapName('core', 'hostname')).toBe('core');
    for (const bad of INJECTIONS) expect(hostMapName(bad, 'alias')).toBeNull();
  });
});

describe('time', () => {
  it('ntp servers: 1 to 8 space-separated names or addresses', () => {
    expect(parseNtpServers('0.debian.pool.ntp.org 192.0.2.1  2001:db8::1')).toEqual([
      '0.debian.pool.ntp.org',
      '192.0.2.1',
      '2001:db8::1',
    ]);
    expect(parseNtpServers('')).toBeNull();
    expect(parseNtpServers(Array(9).fill('192.0.2.1').join(' '))).toBeNull();
    expect(parseNtpServers('ntp.example.net\nServer=evil')).toBeNull();
    for (const bad of INJECTIONS) expect(parseNtpServers(bad), bad.slice(0, 20)).toBeNull();
  });

  it('zones must be in the given zone set and look like zone names', () => {
    const zones = new Set(['Europe/Berlin', 'UTC']);
    expect(isZoneName('Europe/Berlin', zones)).toBe(true);
    expect(isZoneName('Europe/Paris', zones)).toBe(false);
    for (const bad of ['../../etc/passwd', ...INJECTIONS])
      expect(isZoneName(bad, new Set([bad]))).toBe(false);
  });

  it('manual time is ISO 8601', () => {
    expect(parseManualTime('2026-12-04T10:20:30Z')).toBe(Date.UTC(2026, 11, 4, 10, 20, 30));
    expect(parseManualTime('1764843630')).toBeNull();
    expect(parseManualTime('2026-02-30T00:00:00Z')).toBeNull();
  });
});

describe('registration keys', () => {
  it('take six groups of six hex characters whose last is the check group', () => {
    const key = validKey('A1B2C3-D4E5F6-012345-6789AB-CDEF01');
    expect(checkRegistrationKey(key)).toEqual({ ok: true, key });
    expect(checkRegistrationKey(key.toLowerCase())).toEqual({ ok: true, key });
    const wrongCheck = `${key.slice(0, 35)}${key.endsWith('0') ? '1' : '0'}${key.slice(36)}`;
    expect(checkRegistrationKey(wrongCheck)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not valid/),
    });
    for (const bad of [
      '',
      'A1B2C3-D4E5F6-012345-6789AB-CDEF01',
      `${key}-000000`,
      key.replace('A', 'G'),
      ` ${key}`,
      ...INJECTIONS,
    ])
      expect(checkRegistrationKey(bad).ok, bad.slice(0, 40)).toBe(false);
  });
});
