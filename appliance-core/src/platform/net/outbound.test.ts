/**
 * The outbound rule of URL monitoring, judged on hosts as WHATWG URL parsing leaves them (every
 * spelling of an address a browser accepts) and on addresses an injected resolver answers (no
 * DNS query is made).
 */
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  AddressRefusedError,
  addressRefusal,
  guardLookup,
  hostRefusal,
  isMetadataAddress,
} from './outbound.js';

const ON = { allowPrivate: true };
const OFF = { allowPrivate: false };
const hostOf = (url: string) => new URL(url).hostname;

describe('hostRefusal (as saveUrl judges a URL, no lookup)', () => {
  it('refuses the metadata address in every spelling URL parsing accepts', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/', // decimal
      'http://0251.0376.0251.0376/', // octal
      'http://0xa9.0xfe.0xa9.0xfe/', // hex per part
      'http://0xa9fea9fe/', // hex whole
      'http://169.254.43518/', // two-part forms
      'http://[::ffff:169.254.169.254]/', // IPv4-mapped IPv6
      'http://[::ffff:a9fe:a9fe]/',
      'http://[fd00:ec2::254]/', // AWS IPv6
      'http://[FD00:EC2:0:0:0:0:0:254]/',
      'http://100.100.100.200/',
    ]) {
      for (const policy of [ON, OFF])
        expect(hostRefusal(hostOf(url), policy), url).toMatch(/is a cloud metadata address$/);
    }
  });

  it('refuses link-local addresses, IPv4 and IPv6, mapped or not', () => {
    for (const url of [
      'http://169.254.1.1/',
      'http://0xa9fe0101/',
      'http://[fe80::1]/',
      'http://[febf:ffff::1]/',
      'http://[::ffff:169.254.0.1]/',
    ]) {
      expect(hostRefusal(hostOf(url), ON), url).toMatch(/is a link-local address$/);
    }
  });

  it('refuses metadata names as written, whatever their case or trailing dot', () => {
    for (const url of [
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.Google.Internal./',
      'http://metadata/',
      'http://instance-data.ec2.internal/',
    ]) {
      expect(hostRefusal(hostOf(url), ON), url).toMatch(/is a cloud metadata name$/);
    }
    expect(hostRefusal(hostOf('http://metadata.example.com/'), ON)).toBeNull();
  });

  it('refuses addresses that are not one host (0.0.0.0 reaches the appliance itself)', () => {
    for (const url of ['http://0/', 'http://0.0.0.0/', 'http://[::]/', 'http://224.0.0.1/']) {
      expect(hostRefusal(hostOf(url), ON), url).toMatch(/is not a single host's address$/);
    }
  });

  it('allows loopback and private ranges by default, refuses them when private is off', () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://127.1/',
      'http://2130706433/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://172.31.255.255/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://[fc00::1]/',
      'http://[fdff::1]/',
    ]) {
      expect(hostRefusal(hostOf(url), ON), url).toBeNull();
      expect(hostRefusal(hostOf(url), OFF), url).toMatch(/is a (loopback|private) address$/);
    }
  });

  it('allows public addresses and names either way', () => {
    for (const url of [
      'http://93.184.215.14/',
      'http://172.32.0.1/',
      'http://[2606:4700::1111]/',
      'https://status.example.com/',
      'http://localhost/', // a name: judged on what it resolves to, at each check
    ]) {
      expect(hostRefusal(hostOf(url), ON), url).toBeNull();
      expect(hostRefusal(hostOf(url), OFF), url).toBeNull();
    }
  });

  it('isMetadataAddress compares addresses, not text', () => {
    expect(isMetadataAddress('::ffff:a9fe:a9fe')).toBe(true);
    expect(isMetadataAddress('fd00:ec2:0::254')).toBe(true);
    expect(isMetadataAddress('169.254.169.253')).toBe(false);
    expect(addressRefusal('169.254.169.253', ON)).toBe('a link-local address');
  });
});

/** A resolver that answers from a table, counting its calls (both callback forms of lookup). */
function tableResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    calls.push(hostname);
    const addresses = table[hostname];
    const cb = callback;
    if (!addresses) {
      cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      return;
    }
    const list = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if ((options as { all?: boolean }).all) cb(null, list);
    else cb(null, list[0]!.address, list[0]!.family);
  };
  return { lookup, calls };
}

const resolve = (lookup: LookupFunction, host: string, all: boolean) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((done) =>
    lookup(host, { all }, (err: NodeJS.ErrnoException | null, address: unknown) =>
      done({ err, address }),
    ),
  );

describe('guardLookup (as each check resolves, on the addresses it will connect to)', () => {
  const table = {
    'good.test': ['127.0.0.1'],
    'meta.test': ['169.254.169.254'],
    'mixed.test': ['127.0.0.1', 'fe80::1'],
    'mapped.test': ['::ffff:169.254.169.254'],
    'lan.test': ['10.0.0.5'],
  };

  it('passes allowed answers through, single and all', async () => {
    const { lookup, calls } = tableResolver(table);
    const guarded = guardLookup(ON, lookup);
    expect(await resolve(guarded, 'good.test', false)).toEqual({
      err: null,
      address: '127.0.0.1',
    });
    expect(await resolve(guarded, 'good.test', true)).toEqual({
      err: null,
      address: [{ address: '127.0.0.1', family: 4 }],
    });
    expect(calls).toEqual(['good.test', 'good.test']);
  });

  it('refuses a name that resolves to a refused address, even one among several', async () => {
    const guarded = guardLookup(ON, tableResolver(table).lookup);
    for (const [host, text] of [
      ['meta.test', 'meta.test resolves to 169.254.169.254, a cloud metadata address'],
      ['mapped.test', 'mapped.test resolves to ::ffff:169.254.169.254, a cloud metadata address'],
      ['mixed.test', 'mixed.test resolves to fe80::1, a link-local address'],
    ] as const) {
      for (const all of [false, true]) {
        if (host === 'mixed.test' && !all) continue; // the single form only sees the first
        const { err } = await resolve(guarded, host, all);
        expect(err).toBeInstanceOf(AddressRefusedError);
        expect(err?.code).toBe('ERR_ADDRESS_REFUSED');
        expect(err?.message).toBe(text);
      }
    }
  });

  it('refuses metadata names without resolving them', async () => {
    const { lookup, calls } = tableResolver(table);
    const { err } = await resolve(guardLookup(ON, lookup), 'metadata.google.internal', true);
    expect(err?.message).toBe('metadata.google.internal is a cloud metadata name');
    expect(calls).toEqual([]);
  });

  it('with private off, a name resolving to loopback or a private address is refused', async () => {
    const guarded = guardLookup(OFF, tableResolver(table).lookup);
    expect((await resolve(guarded, 'good.test', true)).err?.message).toBe(
      'good.test resolves to 127.0.0.1, a loopback address',
    );
    expect((await resolve(guarded, 'lan.test', false)).err?.message).toBe(
      'lan.test resolves to 10.0.0.5, a private address',
    );
  });

  it('passes resolver errors through unchanged', async () => {
    const { err } = await resolve(guardLookup(ON, tableResolver(table).lookup), 'no.test', true);
    expect(err?.code).toBe('ENOTFOUND');
  });
});
