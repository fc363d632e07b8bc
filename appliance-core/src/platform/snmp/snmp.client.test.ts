/**
 * The SNMP client against a real snmpd on a loopback port: every version and v3 security level,
 * the auth and privacy protocols, failures (wrong community, wrong passphrase, unknown user,
 * closed port, DES without the legacy provider), walks with caps, deadlines and aborts, and no
 * socket left open on any path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePeer } from '../../../../test/harness/peers.js';
import { startSnmpd, type Snmpd } from '../../../../test/harness/snmpd.js';
import {
  decodeVarbind,
  probeSystem,
  SnmpError,
  SnmpSession,
  withSnmpSession,
  type SnmpTarget,
} from './snmp.client.js';

const FAST = { timeoutMs: 600, retries: 0 };
const PASS = 'authpass123';
const PRIV = 'privpass123';

const openUdpSockets = () =>
  (
    process as unknown as {
      _getActiveHandles(): { constructor: { name: string }; type?: unknown }[];
    }
  )
    ._getActiveHandles()
    .filter((h) => h.constructor.name === 'Socket' && String(h.type).startsWith('udp')).length;

describe.runIf(havePeer('snmpd', 'snmpd'))('SNMP client against snmpd', () => {
  let agent: Snmpd;
  beforeAll(async () => {
    agent = await startSnmpd({
      users: [
        {
          name: 'privuser',
          level: 'authPriv',
          auth: 'SHA',
          authPass: PASS,
          priv: 'AES',
          privPass: PRIV,
        },
        { name: 'authuser', level: 'authNoPriv', auth: 'SHA-256', authPass: PASS },
        { name: 'nouser', level: 'noAuthNoPriv' },
        {
          name: 'md5user',
          level: 'authPriv',
          auth: 'MD5',
          authPass: PASS,
          priv: 'DES',
          privPass: PRIV,
        },
        {
          name: 'user512',
          level: 'authPriv',
          auth: 'SHA-512',
          authPass: PASS,
          priv: 'AES-256',
          privPass: PRIV,
        },
        { name: 'user224', level: 'authNoPriv', auth: 'SHA-224', authPass: PASS },
        { name: 'user384', level: 'authNoPriv', auth: 'SHA-384', authPass: PASS },
      ],
    });
  });
  afterAll(() => agent?.stop());

  const target = (extra: Partial<SnmpTarget>): SnmpTarget => ({
    host: agent.host,
    port: agent.port,
    version: 2,
    community: agent.community,
    ...extra,
  });
  const sysName = (t: SnmpTarget) =>
    withSnmpSession(t, FAST, async (s) => (await probeSystem(s)).sysName);
  const failure = async (t: SnmpTarget) => {
    try {
      await sysName(t);
    } catch (err) {
      expect(err).toBeInstanceOf(SnmpError);
      return err as SnmpError;
    }
    throw new Error('expected a failure');
  };

  it('reads the system group with v1, v2c and every v3 security level', async () => {
    expect(await sysName(target({ version: 1 }))).toBe('snmp-peer');
    expect(await sysName(target({ version: 2 }))).toBe('snmp-peer');
    expect(await sysName(target({ version: 3, security: 'noAuthNoPriv', user: 'nouser' }))).toBe(
      'snmp-peer',
    );
    expect(
      await sysName(
        target({
          version: 3,
          security: 'authNoPriv',
          user: 'authuser',
          authProtocol: 'SHA256',
          authKey: PASS,
        }),
      ),
    ).toBe('snmp-peer');
    expect(
      await sysName(
        target({
          version: 3,
          security: 'authPriv',
          user: 'privuser',
          authProtocol: 'SHA',
          authKey: PASS,
          privProtocol: 'AES',
          privKey: PRIV,
        }),
      ),
    ).toBe('snmp-peer');
  });

  it('speaks the SHA-2 family and 256-bit AES (both key localizations)', async () => {
    expect(
      await sysName(
        target({
          version: 3,
          security: 'authNoPriv',
          user: 'user224',
          authProtocol: 'SHA224',
          authKey: PASS,
        }),
      ),
    ).toBe('snmp-peer');
    expect(
      await sysName(
        target({
          version: 3,
          security: 'authNoPriv',
          user: 'user384',
          authProtocol: 'SHA384',
          authKey: PASS,
        }),
      ),
    ).toBe('snmp-peer');
    for (const privProtocol of ['AES256B', 'AES256R'] as const) {
      expect(
        await sysName(
          target({
            version: 3,
            security: 'authPriv',
            user: 'user512',
            authProtocol: 'SHA512',
            authKey: PASS,
            privProtocol,
            privKey: PRIV,
          }),
        ),
      ).toBe('snmp-peer');
    }
  });

  it('names each failure', async () => {
    expect((await failure(target({ community: 'wrong-community' }))).kind).toBe('timeout');
    const badAuth = await failure(
      target({
        version: 3,
        security: 'authPriv',
        user: 'privuser',
        authProtocol: 'SHA',
        authKey: 'wrong-pass',
        privProtocol: 'AES',
        privKey: PRIV,
      }),
    );
    expect(badAuth.kind).toBe('auth');
    expect(badAuth.message).not.toContain('wrong-pass');
    expect(
      (await failure(target({ version: 3, security: 'noAuthNoPriv', user: 'nobody' }))).kind,
    ).toBe('auth');
    // A priv-only user asked at authNoPriv: the agent refuses the request.
    expect(
      (
        await failure(
          target({
            version: 3,
            security: 'authNoPriv',
            user: 'privuser',
            authProtocol: 'SHA',
            authKey: PASS,
          }),
        )
      ).kind,
    ).toBe('refused');
    expect((await failure(target({ port: 9 }))).kind).toBe('timeout');
    const des = await failure(
      target({
        version: 3,
        security: 'authPriv',
        user: 'md5user',
        authProtocol: 'MD5',
        authKey: PASS,
        privProtocol: 'DES',
        privKey: PRIV,
      }),
    );
    expect(['unsupported', 'refused']).toContain(des.kind);
    expect(() => SnmpSession.open(target({ host: 'localhost' }), FAST)).toThrow(/IP address/);
    expect(() => SnmpSession.open(target({ community: '' }), FAST)).toThrow(/community/);
    expect(() =>
      SnmpSession.open(target({ version: 3, security: 'authPriv', user: 'x' }), FAST),
    ).toThrow(/protocol and a passphrase/);
  });

  it('walks a subtree and decodes values to JSON-safe types', async () => {
    const result = await withSnmpSession(target({}), FAST, (s) =>
      s.subtree('1.3.6.1.2.1.2.2.1', { maxVarbinds: 10_000, deadlineMs: 10_000 }),
    );
    expect(result.truncated).toBe(false);
    const expected = agent
      .cli('snmpwalk', ['1.3.6.1.2.1.2.2.1'])
      .split('\n')
      .filter((l) => l.startsWith('.'))
      .map((l) => l.split(' ')[0]!.slice(1));
    expect(result.varbinds.map((v) => v.oid)).toEqual(expected);
    const descr = result.varbinds.find((v) => v.oid.startsWith('1.3.6.1.2.1.2.2.1.2.'));
    expect(descr).toMatchObject({ type: 'OctetString', value: expect.any(String) });
    const ifType = result.varbinds.find((v) => v.oid.startsWith('1.3.6.1.2.1.2.2.1.3.'));
    expect(ifType).toMatchObject({ type: 'Integer', value: expect.any(Number) });
    const hc = await withSnmpSession(target({}), FAST, (s) =>
      s.subtree('1.3.6.1.2.1.31.1.1.1.6', { maxVarbinds: 100, deadlineMs: 5000 }),
    );
    expect(hc.varbinds[0]).toMatchObject({ type: 'Counter64', value: expect.any(Number) });
    expect(JSON.parse(JSON.stringify(result.varbinds))).toEqual(result.varbinds);
  });

  it('stops a walk at its varbind cap, its deadline or an abort', async () => {
    const capped = await withSnmpSession(target({}), FAST, (s) =>
      s.walk('1.3.6.1', { maxVarbinds: 25, deadlineMs: 10_000 }),
    );
    expect(capped).toMatchObject({ truncated: true });
    expect(capped.varbinds).toHaveLength(25);

    const expired = await withSnmpSession(target({ version: 1 }), FAST, (s) =>
      s.walk('1.3.6.1', { maxVarbinds: 1_000_000, deadlineMs: 50 }),
    );
    expect(expired.truncated).toBe(true);
    expect(expired.varbinds.length).toBeLessThan(8000);

    const controller = new AbortController();
    const pending = withSnmpSession(
      target({ community: 'wrong-community' }),
      { timeoutMs: 5000, retries: 0 },
      (s) =>
        s.subtree('1.3.6.1.2.1.1', {
          maxVarbinds: 10,
          deadlineMs: 60_000,
          signal: controller.signal,
        }),
    );
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
  });

  it('leaves no UDP socket open on success or failure', async () => {
    const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
    await settle();
    expect(openUdpSockets()).toBe(0);
    const pending = failure(target({ community: 'wrong-community' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openUdpSockets()).toBe(1); // the probe does see a session's socket while a request is in flight
    await pending;
    await sysName(target({}));
    await failure(target({ community: 'wrong-community' }));
    await failure(target({ version: 3, security: 'noAuthNoPriv', user: 'nobody' }));
    await settle();
    expect(openUdpSockets()).toBe(0);
  });
});

describe('varbind decoding', () => {
  it('keeps printable text, shows binary as hex and big counters as strings', () => {
    expect(decodeVarbind({ oid: '1.2', type: 4, value: Buffer.from('eth0') })).toEqual({
      oid: '1.2',
      type: 'OctetString',
      value: 'eth0',
    });
    expect(
      decodeVarbind({ oid: '1.2', type: 4, value: Buffer.from([0x00, 0x1a, 0x2b, 0xff]) }),
    ).toEqual({ oid: '1.2', type: 'Hex-STRING', value: '00:1a:2b:ff' });
    expect(decodeVarbind({ oid: '1.2', type: 70, value: Buffer.from([0x01, 0x00]) })).toEqual({
      oid: '1.2',
      type: 'Counter64',
      value: 256,
    });
    expect(
      decodeVarbind({
        oid: '1.2',
        type: 70,
        value: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      }),
    ).toEqual({ oid: '1.2', type: 'Counter64', value: '18446744073709551615' });
    expect(decodeVarbind({ oid: '1.2', type: 2, value: -5 })).toEqual({
      oid: '1.2',
      type: 'Integer',
      value: -5,
    });
    expect(decodeVarbind({ oid: '1.2', type: 6, value: '1.3.6.1.4.1.8072' })).toEqual({
      oid: '1.2',
      type: 'OID',
      value: '1.3.6.1.4.1.8072',
    });
    expect(decodeVarbind({ oid: '1.2', type: 129, value: null })).toEqual({
      oid: '1.2',
      type: 'NoSuchInstance',
      value: null,
    });
    expect(decodeVarbind({ oid: '1.2', type: 4, value: Buffer.from('<script>') })).toEqual({
      oid: '1.2',
      type: 'OctetString',
      value: '<script>',
    });
  });
});
