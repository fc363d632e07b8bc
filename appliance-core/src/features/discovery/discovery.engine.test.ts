/**
 * Discovery sweeps with the real fping and a real snmpd, on loopback ranges only (127.0.0.0/8;
 * Linux answers ICMP on all of it). snmpd listens on 127.0.0.5 only, on a free port that the
 * credential set names (`snmp_port`); a TCP listener on 127.0.0.9 is what the portscan finds.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import { startSnmpd, type Snmpd } from '../../../../test/harness/snmpd.js';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { Scheduler } from '../../platform/scheduler/scheduler.js';
import { SecretBox } from '../../platform/security/secret-box.js';
import { systemClock } from '../../platform/time/time.js';
import { DiscoveryEngine, fallbackCommunityOf, guessProfile } from './discovery.engine.js';

const AUTH = 'authpass123';
const PRIV = 'privpass123';
const peers = havePeer('fping', 'fping') && havePeer('snmpd', 'snmpd');

describe('profile guess', () => {
  it('reads the system description first, then the open ports', () => {
    expect(guessProfile('Linux vm 6.1 x86_64', null)).toBe('dash_linux_snmp');
    expect(guessProfile('Hardware: x86 - Software: Windows Version 10.0', null)).toBe(
      'dash_windows_wmi',
    );
    expect(guessProfile('Cisco IOS Software, C2960', null)).toBe('dash_network_snmp');
    expect(guessProfile(null, [135, 445])).toBe('dash_windows_wmi');
    expect(guessProfile(null, [22, 80])).toBe('dash_generic');
    expect(guessProfile(null, null)).toBe('dash_generic');
  });
});

describe.runIf(peers)('discovery sweeps (fping + snmpd on loopback)', () => {
  let agent: Snmpd;
  let listener: net.Server;
  let openPort: number;
  let dir: string;
  let db: DB;
  let box: SecretBox;
  let engine: DiscoveryEngine;

  const log = pino({ level: 'silent' });
  const insertNet = (network: string, broadcast: string, portscan = false) => {
    const num = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
    return Number(
      db
        .prepare(
          `INSERT INTO local_networks (label, network, broadcast, network_num, broadcast_num, interval, enable_discovery, enable_portscan, created_at, updated_at)
           VALUES ('test', ?, ?, ?, ?, 3600, 1, ?, 0, 0)`,
        )
        .run(network, broadcast, num(network), num(broadcast), portscan ? 1 : 0).lastInsertRowid,
    );
  };
  const insertCred = (fields: {
    community?: string;
    user: string;
    authpass?: string;
    privpass?: string;
    port: number;
  }) =>
    Number(
      db
        .prepare(
          `INSERT INTO snmp_credentials (label, authuser, snmp_authprot, snmp_privprot, snmp_community, authpass, snmp_privpass, snmp_port, created_at, updated_at)
           VALUES ('c', ?, 'SHA', 'AES', ?, ?, ?, ?, 0, 0)`,
        )
        .run(
          fields.user,
          fields.community ? box.seal(fields.community) : null,
          fields.authpass ? box.seal(fields.authpass) : null,
          fields.privpass ? box.seal(fields.privpass) : null,
          fields.port,
        ).lastInsertRowid,
    );
  const link = (netId: number, credIds: number[]) =>
    credIds.forEach((credId, position) =>
      db
        .prepare(
          'INSERT INTO local_network_credentials (net_id, cred_id, position) VALUES (?, ?, ?)',
        )
        .run(netId, credId, position),
    );
  const pending = () =>
    db.prepare('SELECT * FROM pending_devices ORDER BY id').all() as Record<string, unknown>[];

  beforeAll(async () => {
    agent = await startSnmpd({
      addresses: ['127.0.0.5'],
      community: 'sweep-community',
      users: [
        {
          name: 'sweeper',
          level: 'authPriv',
          auth: 'SHA',
          authPass: AUTH,
          priv: 'AES',
          privPass: PRIV,
        },
      ],
    });
    listener = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.9', resolve));
    openPort = (listener.address() as net.AddressInfo).port;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'discovery-test-'));
    db = openDatabase(path.join(dir, 'test.db'));
    migrate(db, Date.now());
    box = new SecretBox(Buffer.alloc(32, 7));
    db.prepare(
      `INSERT INTO devices (label, ip_address, profile, created_at, updated_at) VALUES ('known', '127.0.0.3', 'dash_generic', 0, 0)`,
    ).run();
    engine = new DiscoveryEngine(
      { db, clock: systemClock, secrets: box, log, scheduler: new Scheduler(systemClock) },
      { portscanPorts: [openPort], portTimeoutMs: 500, snmpTiming: { timeoutMs: 700, retries: 0 } },
    );
  });
  afterAll(async () => {
    await agent?.stop();
    listener?.close();
    db?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sweeps 127.0.0.0/28: every ICMP responder that is not a device becomes pending; the SNMP agent with the credential set that answered', async () => {
    const netId = insertNet('127.0.0.0', '127.0.0.15', true);
    const wrong = insertCred({
      community: 'wrong-community',
      user: 'sweeper',
      authpass: 'wrong-pass-1',
      privpass: PRIV,
      port: agent.port,
    });
    const right = insertCred({ user: 'sweeper', authpass: AUTH, privpass: PRIV, port: agent.port });
    link(netId, [wrong, right]);

    const result = await engine.sweep(netId);
    expect(result).toEqual({
      statusId: expect.any(Number),
      addresses: 14,
      alive: 14,
      snmp_responders: 1,
      new_pending: 12,
      error: null,
    });

    const rows = pending();
    // 127.0.0.1 (device 1) and 127.0.0.3 are devices; the other twelve hosts are pending.
    expect(rows.map((r) => r.ip_address)).toEqual(
      ['2', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14'].map((n) => `127.0.0.${n}`),
    );
    const snmpHost = rows.find((r) => r.ip_address === '127.0.0.5') as Record<string, unknown>;
    expect(snmpHost).toMatchObject({
      label: 'snmp-peer',
      profile: 'dash_linux_snmp',
      enable_snmp: 1,
      snmp_version: 3,
      snmp_port: agent.port,
      snmp_v3_security: 'authPriv',
      authuser: 'sweeper',
      authprot: 'SHA',
      privprot: 'AES',
      source: 'discovery',
      net_id: netId,
      hidden: 0,
      sys_descr: expect.stringMatching(/^Linux/),
    });
    expect([box.open(snmpHost.authpass as string), box.open(snmpHost.privpass as string)]).toEqual([
      AUTH,
      PRIV,
    ]);
    for (const row of rows.filter((r) => r.ip_address !== '127.0.0.5')) {
      expect(row).toMatchObject({
        label: row.ip_address,
        enable_snmp: 0,
        snmp_community: null,
        authuser: null,
      });
    }
    expect(rows.find((r) => r.ip_address === '127.0.0.9')).toMatchObject({
      open_ports: JSON.stringify([openPort]),
    });
    expect(rows.find((r) => r.ip_address === '127.0.0.8')).toMatchObject({
      open_ports: '[]',
      profile: 'dash_generic',
    });

    const status = db
      .prepare('SELECT * FROM discovery_status WHERE id = ?')
      .get(result!.statusId) as Record<string, unknown>;
    expect(status).toMatchObject({
      net_id: netId,
      addresses: 14,
      alive: 14,
      snmp_responders: 1,
      new_pending: 12,
      error: null,
    });
    expect(status.end_time as number).toBeGreaterThanOrEqual(status.start_time as number);
    expect(
      db.prepare('SELECT last_discovery_at FROM local_networks WHERE id = ?').get(netId),
    ).toEqual({ last_discovery_at: status.end_time });
  });

  it('finds the same agent over v2c with a community, and a second sweep adds nothing new', async () => {
    const netId = insertNet('127.0.0.4', '127.0.0.7');
    link(netId, [insertCred({ community: 'sweep-community', user: '', port: agent.port })]);
    db.prepare(`DELETE FROM pending_devices WHERE ip_address = '127.0.0.5'`).run();
    const first = await engine.sweep(netId);
    expect(first).toMatchObject({
      addresses: 2,
      alive: 2,
      snmp_responders: 1,
      new_pending: 1,
      error: null,
    });
    expect(pending().find((r) => r.ip_address === '127.0.0.5')).toMatchObject({
      snmp_version: 2,
      snmp_port: agent.port,
      enable_snmp: 1,
      label: 'snmp-peer',
    });
    const second = await engine.sweep(netId);
    expect(second).toMatchObject({ new_pending: 0, error: null });
  });

  it('never blocks the event loop while it sweeps a /22 (1022 addresses in chunks)', async () => {
    const netId = insertNet('127.2.0.0', '127.2.3.255');
    // The state that shows it: this thread runs between the chunks and sees each chunk's rows
    // committed while the sweep goes on (256 addresses a chunk: 256, 512, 768, then 1022).
    const recorded = db.prepare(
      `SELECT count(*) AS n FROM pending_devices WHERE ip_address LIKE '127.2.%'`,
    );
    const seen = new Set<number>();
    const timer = setInterval(() => seen.add((recorded.get() as { n: number }).n), 5);
    const result = await engine.sweep(netId);
    clearInterval(timer);
    expect(result).toMatchObject({ addresses: 1022, alive: 1022, new_pending: 1022, error: null });
    expect([...seen].filter((n) => n > 0 && n < 1022).sort((a, b) => a - b)).toEqual([
      256, 512, 768,
    ]);
    expect(
      (
        db
          .prepare(`SELECT count(*) AS n FROM pending_devices WHERE ip_address LIKE '127.2.%'`)
          .get() as { n: number }
      ).n,
    ).toBe(1022);
  });

  it('stops at an abort and records it', async () => {
    const netId = insertNet('127.3.0.0', '127.3.15.255');
    const controller = new AbortController();
    const running = engine.sweep(netId, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const result = await running;
    expect(result).toMatchObject({ error: 'aborted' });
    expect(result!.new_pending).toBeLessThan(4094);
    expect(
      db
        .prepare('SELECT error, end_time IS NOT NULL AS ended FROM discovery_status WHERE id = ?')
        .get(result!.statusId),
    ).toEqual({ error: 'aborted', ended: 1 });
    expect(
      db.prepare('SELECT last_discovery_at FROM local_networks WHERE id = ?').get(netId),
    ).toEqual({ last_discovery_at: null });
  });

  it('keeps one scheduler job per enabled network, and a removed network’s running sweep stops without writing', async () => {
    const scheduler = new Scheduler(systemClock);
    const scheduled = new DiscoveryEngine({ db, clock: systemClock, secrets: box, log, scheduler });
    const netId = insertNet('127.5.0.0', '127.5.15.255');
    scheduled.sync(netId);
    expect(scheduler.has(DiscoveryEngine.jobId(netId))).toBe(true);
    db.prepare('UPDATE local_networks SET enable_discovery = 0 WHERE id = ?').run(netId);
    scheduled.sync(netId);
    expect(scheduler.has(DiscoveryEngine.jobId(netId))).toBe(false);

    const running = scheduled.sweep(netId);
    // Wait (bounded) for the sweep to be under way, not for a fixed time.
    for (let i = 0; i < 500 && !scheduled.isSweeping(netId); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(scheduled.isSweeping(netId)).toBe(true);
    db.prepare('DELETE FROM local_networks WHERE id = ?').run(netId);
    scheduled.remove(netId);
    const result = await running;
    expect(result).toMatchObject({ error: 'aborted' });
    expect(scheduled.isSweeping(netId)).toBe(false);
    expect(
      (
        db
          .prepare(`SELECT count(*) AS n FROM pending_devices WHERE ip_address LIKE '127.5.%'`)
          .get() as { n: number }
      ).n,
    ).toBe(0);
  });

  it('records a missing fping as the sweep’s error', async () => {
    const noFping = new DiscoveryEngine(
      { db, clock: systemClock, secrets: box, log, scheduler: new Scheduler(systemClock) },
      { icmp: { tool: { program: 'fping-not-installed', debianPackage: 'fping' } } },
    );
    const netId = insertNet('127.0.4.0', '127.0.4.3');
    expect(await noFping.sweep(netId)).toMatchObject({
      error: 'fping-not-installed is not installed (Debian package fping)',
      new_pending: 0,
    });
  });
});

describe.runIf(peers)('discovery through the API', () => {
  let h: Harness;
  let agent: Snmpd;
  let admin: string;

  beforeAll(async () => {
    agent = await startSnmpd({ addresses: ['127.0.0.5'], community: 'api-community' });
    h = await startAppliance();
    admin = await h.login();
  });
  afterAll(async () => {
    await h?.close();
    await agent?.stop();
  });

  const post = (path: string, body?: unknown) => h.request('POST', path, { token: admin, body });
  const waitForSweep = async (netId: number, afterId = 0) => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const res = await post('/api/getDevicesPending');
      const status = (
        res.body.discovery_status as { id: number; net_id: number; end_time: string | null }[]
      ).find((s) => s.net_id === netId);
      if (status && status.id > afterId && status.end_time !== null)
        return {
          status,
          devices: res.body.devices as {
            ip_address: string;
            label: string;
            snmpconfig: Record<string, unknown>;
          }[],
        };
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('no finished sweep within 60 s');
  };

  it('an enabled local network is swept at once; resetDiscoveryTs sweeps it again', async () => {
    const cred = await post('/api/addEditCredential', {
      action: 'addedit',
      label: 'lab',
      authuser: 'none',
      snmp_authprot: 'SHA',
      snmp_privprot: 'AES',
      snmp_community: 'api-community',
      snmp_port: agent.port,
    });
    const saved = await post('/api/updateLocalnet', {
      data: [
        {
          label: 'loopback /28',
          network: '127.0.0.0',
          broadcast: '127.0.0.15',
          enable_discovery: true,
          interval: 86_400,
          cred_ids: [cred.body.credential.id],
        },
      ],
    });
    const netId = saved.body.data[0].id as number;
    const first = await waitForSweep(netId);
    expect(first.status).toEqual({
      id: expect.any(Number),
      net_id: netId,
      start_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      end_time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });
    expect(first.devices.map((d) => d.ip_address)).toHaveLength(13);
    expect(first.devices.find((d) => d.ip_address === '127.0.0.5')).toMatchObject({
      label: 'snmp-peer',
      snmpconfig: {
        snmp_version: 2,
        snmp_port: agent.port,
        snmp_community: { __encrypted__: true },
      },
    });
    const nets = await h.request('GET', '/api/getLocalnets', { token: admin });
    expect(nets.body.data[0].timestamp).toEqual(expect.any(Number));

    await post('/api/removePendingDevice', {
      id: (first.devices.find((d) => d.ip_address === '127.0.0.7') as unknown as { id: number }).id,
    });
    const reset = await post('/api/resetDiscoveryTs', { id: netId });
    expect(reset.body).toEqual({
      status: 201,
      hasError: false,
      message: 'Discovery of this network runs now',
    });
    const second = await waitForSweep(netId, first.status.id);
    expect(second.devices.map((d) => d.ip_address)).toContain('127.0.0.7');
  });
});

describe('fallbackCommunityOf (the daemon variables snmp_community and snmp_port)', () => {
  it('needs a community; the port defaults to 161', () => {
    expect(fallbackCommunityOf({})).toBeNull();
    expect(fallbackCommunityOf({ snmp_port: '1161' })).toBeNull();
    expect(fallbackCommunityOf({ snmp_community: 'c' })).toEqual({ community: 'c', port: 161 });
    expect(fallbackCommunityOf({ snmp_community: 'c', snmp_port: '1161' })).toEqual({
      community: 'c',
      port: 1161,
    });
    expect(fallbackCommunityOf({ snmp_community: 'c', snmp_port: '0' })).toEqual({
      community: 'c',
      port: 161,
    });
    expect(fallbackCommunityOf({ snmp_community: 'c', snmp_port: '70000' })).toEqual({
      community: 'c',
      port: 161,
    });
  });
});
