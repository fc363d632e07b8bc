/**
 * The outlet address policy judged on URLs as users type them: every spelling of a refused
 * address, names refused without a lookup, and the operator's allowlist.
 */
import { describe, expect, it } from 'vitest';
import { outletPolicy, parseAllowList } from '../../../platform/net/outbound.js';
import { checkOutletUrl } from './outlet-url.rules.js';

const STRICT = outletPolicy([]);
const reason = (url: string, policy = STRICT) => {
  const result = checkOutletUrl(url, policy);
  return result.ok ? null : result.reason;
};

describe('checkOutletUrl', () => {
  it('refuses loopback in every spelling URL parsing accepts', () => {
    for (const url of [
      'http://127.0.0.1/hook',
      'http://127.8.9.10:8080/',
      'http://2130706433/', // decimal
      'http://0177.0.0.1/', // octal
      'http://0x7f.0.0.1/', // hex per part
      'http://0x7f000001/', // hex whole
      'http://127.1/', // short form
      'http://017700000001/', // octal whole
      'http://[::1]/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'https://[::ffff:127.0.0.1]:8443/x',
    ])
      expect(reason(url), url).toMatch(/^Refused: .* is a loopback address$/);
  });

  it('refuses 0.0.0.0 and other non-host addresses', () => {
    for (const url of [
      'http://0.0.0.0/',
      'http://0/',
      'http://[::]/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
    ])
      expect(reason(url), url).toMatch(/not a single host's address$/);
  });

  it('refuses the metadata set in every spelling, and metadata names without a lookup', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/',
      'http://0251.0376.0251.0376/',
      'http://0xa9fea9fe/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/',
    ])
      expect(reason(url), url).toMatch(/is a cloud metadata address$/);
    for (const url of ['http://metadata.google.internal/', 'http://METADATA.google.internal./x'])
      expect(reason(url), url).toMatch(/is a cloud metadata name$/);
  });

  it('refuses private, carrier-grade NAT and link-local addresses', () => {
    for (const url of [
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://[fd12::1]/',
      'http://100.64.0.1/',
    ])
      expect(reason(url), url).toMatch(/is a private address$/);
    for (const url of ['http://169.254.1.1/', 'http://[fe80::1]/'])
      expect(reason(url), url).toMatch(/is a link-local address$/);
  });

  it('refuses localhost names and punycode names, as typed or as parsing encodes them', () => {
    expect(reason('http://localhost:8080/')).toBe('Refused: localhost is a loopback name');
    expect(reason('http://hooks.LOCALHOST./')).toBe('Refused: hooks.localhost is a loopback name');
    expect(reason('http://xn--e1afmkfd.xn--p1ai/')).toMatch(/punycode/);
    expect(reason('http://пример.рф/')).toMatch(/^Refused: xn--e1afmkfd\.xn--p1ai is a punycode/);
    expect(reason('https://hooks.xn--slck-6qa.com/services/x')).toMatch(/punycode/);
  });

  it('refuses other schemes, credentials in the URL and junk', () => {
    expect(reason('ftp://example.com/')).toBe('The URL scheme must be http or https');
    expect(reason('file:///etc/passwd')).toBe('The URL scheme must be http or https');
    expect(reason('http://user:pw@example.com/')).toMatch(/must not carry credentials/);
    expect(reason('not a url')).toBe('The URL is not valid');
    expect(reason('')).toBe('The URL is required');
    expect(reason(`https://example.com/${'a'.repeat(3000)}`)).toMatch(/longer than/);
  });

  it('accepts public names and globally routable addresses', () => {
    for (const url of [
      'https://hooks.slack.com/services/T000/B000/XXXX',
      'https://discord.com/api/webhooks/1/abc',
      'https://example.webhook.office.com/webhookb2/x',
      'http://93.184.216.34/',
      'http://[2606:4700::1111]/',
    ])
      expect(reason(url), url).toBeNull();
  });

  it('lets the operator allowlist hosts, addresses (any spelling) and CIDRs', () => {
    const policy = outletPolicy([
      '127.0.0.1',
      '10.0.0.0/8',
      'xn--e1afmkfd.xn--p1ai',
      '*.corp.example',
      '[::1]',
    ]);
    for (const url of [
      'http://127.0.0.1:9000/',
      'http://2130706433:9000/',
      'http://[::ffff:127.0.0.1]/',
      'http://10.20.30.40/',
      'http://пример.рф/',
      'http://chat.corp.example/',
      'http://[::1]/',
    ])
      expect(reason(url, policy), url).toBeNull();
    // Only what was named: the neighbours stay refused.
    expect(reason('http://127.0.0.2/', policy)).toMatch(/loopback/);
    expect(reason('http://11.0.0.1/', policy)).toBeNull(); // public anyway
    expect(reason('http://192.168.0.1/', policy)).toMatch(/private/);
    expect(reason('http://localhost/', policy)).toMatch(/loopback name/);
    expect(reason('http://169.254.169.254/', policy)).toMatch(/metadata/);
  });

  it('refuses a malformed allowlist entry by name', () => {
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow(/10\.0\.0\.0\/33/);
    expect(() => parseAllowList(['bad host!'])).toThrow(/bad host!/);
    expect(parseAllowList([' ', 'Hooks.Example.NET.'])).toMatchObject({
      names: ['hooks.example.net'],
    });
  });
});
