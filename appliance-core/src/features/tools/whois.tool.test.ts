import { describe, expect, it } from 'vitest';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import { parseWhois, whoisArgs } from './whois.tool.js';

describe('whois answers', () => {
  it('reads Key: value lines, skipping comments and empty values', () => {
    const text = [
      '% RIPE comment',
      '# ARIN comment',
      '',
      'inetnum:        193.0.0.0 - 193.0.7.255',
      'netname:        RIPE-NCC',
      'descr:          RIPE Network Coordination Centre',
      'descr:          Amsterdam',
      'remarks:',
      'Org Name: Example Org',
      '   indented continuation',
      'not a pair',
    ].join('\r\n');
    expect(parseWhois(text)).toEqual({
      inetnum: '193.0.0.0 - 193.0.7.255',
      netname: 'RIPE-NCC',
      descr: 'RIPE Network Coordination Centre\nAmsterdam',
      'Org Name': 'Example Org',
    });
  });

  it('keeps a repeated value once and refuses prototype keys', () => {
    expect(parseWhois('source: RIPE\nsource: RIPE\n__proto__: x\nconstructor: y\n')).toEqual({
      source: 'RIPE',
      constructor: 'y',
    });
  });

  it('bounds the number of keys and the size of values', () => {
    const many = Array.from({ length: 300 }, (_, i) => `key${i}: v`).join('\n');
    expect(Object.keys(parseWhois(many))).toHaveLength(200);
    expect(parseWhois(`big: ${'x'.repeat(10_000)}`).big).toHaveLength(4096);
  });

  it('builds the arguments: the configured server, then the IP after --', () => {
    const ip = parseTarget('8.8.8.8') as Target;
    expect(whoisArgs(ip, null)).toEqual(['--', '8.8.8.8']);
    expect(whoisArgs(ip, { host: 'whois.example.net', port: 4343 })).toEqual([
      '-h',
      'whois.example.net',
      '-p',
      '4343',
      '--',
      '8.8.8.8',
    ]);
  });
});
