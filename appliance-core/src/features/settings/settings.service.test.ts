/**
 * The settings service on a real database and a fake root helper (a real Unix socket peer):
 * the confirm/rollback window of an applied network change (shortened for the test), and the
 * use_sniffer provider the captures feature reads its default interfaces from.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApplianceConfig } from '../../platform/config/config.js';
import type { CoreContext } from '../../platform/context.js';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { EngineRegistry } from '../../platform/engines/engine-registry.js';
import { RootHelperClient } from '../../platform/host/root-helper.client.js';
import {
  startFakeRootHelper,
  type FakeRootHelper,
} from '../../platform/host/testing/fake-root-helper.js';
import { DEFAULT_HOST_PATHS } from './host-system.service.js';
import { createSettings } from './index.js';
import { SettingsService } from './settings.service.js';

let dir: string;
let db: DB;
let helper: FakeRootHelper;
let ctx: CoreContext;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'settings-service-'));
  db = openDatabase(path.join(dir, 'appliance.db'));
  migrate(db, Date.now());
  helper = await startFakeRootHelper();
  ctx = {
    db,
    clock: { now: () => Date.now() },
    config: { networkMode: 'apply', rootHelperSocket: helper.socketPath } as ApplianceConfig,
    log: pino({ level: 'silent' }),
    hostname: () => os.hostname(),
  } as unknown as CoreContext;
});
afterEach(async () => {
  await helper.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const service = (
  confirmWindowMs: number,
  mode: 'apply' | 'dry-run' = 'apply',
  paths = DEFAULT_HOST_PATHS,
) =>
  new SettingsService(ctx, {
    registry: () => new EngineRegistry(),
    helper: new RootHelperClient({ socketPath: helper.socketPath }),
    mode,
    paths,
    confirmWindowMs,
  });
const LO = [{ name: 'lo', config: { type: 'manual' } }];
const waitFor = async (check: () => boolean, ms: number) => {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return check();
};

describe('network confirm window', () => {
  it('asks the helper to roll back when no confirmation arrives within the window', async () => {
    const settings = service(300);
    const rolledBack: string[][] = [];
    const result = await settings.setNetwork(LO, (names) => rolledBack.push(names));
    expect(result.dryRun).toBe(false);
    expect(helper.requests[0]).toMatchObject({ op: 'network.apply', args: { confirmSeconds: 1 } });
    expect(settings.pendingNetwork?.interfaces).toEqual(['lo']);
    expect(await waitFor(() => rolledBack.length > 0, 3_000)).toBe(true);
    expect(rolledBack).toEqual([['lo']]);
    expect(helper.requests.map((r) => r.op)).toEqual(['network.apply', 'network.rollback']);
    expect(settings.pendingNetwork).toBeNull();
    // Too late now: nothing to confirm.
    expect(await settings.confirmPendingNetwork()).toBe(false);
    settings.close();
  });

  it('a confirmation within the window sends network.confirm and no roll-back follows', async () => {
    const settings = service(400);
    const rolledBack: string[][] = [];
    await settings.setNetwork(LO, (names) => rolledBack.push(names));
    expect(await settings.confirmPendingNetwork()).toBe(true);
    await new Promise((r) => setTimeout(r, 700));
    expect(rolledBack).toEqual([]);
    expect(helper.requests.map((r) => r.op)).toEqual(['network.apply', 'network.confirm']);
    settings.close();
  });

  it('a change the helper refuses leaves nothing pending', async () => {
    helper.answer = () => ({ ok: false, code: 'refused', message: 'interface not allowed' });
    const settings = service(300);
    await expect(settings.setNetwork(LO, () => {})).rejects.toThrow('interface not allowed');
    expect(settings.pendingNetwork).toBeNull();
  });
});

describe('use_sniffer provider', () => {
  it("lists the interfaces marked use_sniffer (the captures feature's defaults), saved in dry run too", async () => {
    const settings = createSettings({
      ...ctx,
      config: { networkMode: 'dry-run' } as ApplianceConfig,
    });
    expect(settings.sniffInterfaces()).toEqual([]);
    await settings.service.setNetwork(
      [{ name: 'lo', config: { type: 'manual', use_sniffer: true } }],
      () => {},
    );
    expect(settings.sniffInterfaces()).toEqual(['lo']);
    await settings.service.setNetwork(
      [{ name: 'lo', config: { type: 'manual', use_sniffer: false } }],
      () => {},
    );
    expect(settings.sniffInterfaces()).toEqual([]);
    // The dry run sent nothing to the helper.
    expect(helper.requests).toEqual([]);
  });
});

describe('the systemd unit as a service', () => {
  const unitPaths = () => {
    const run = path.join(dir, 'systemd-run');
    fs.mkdirSync(run, { recursive: true });
    const cgroup = path.join(dir, 'cgroup');
    fs.writeFileSync(cgroup, '0::/system.slice/netmon-appliance.service\n');
    return { ...DEFAULT_HOST_PATHS, systemdRun: run, cgroup };
  };

  it('procmon acts on the unit through the helper in apply mode, and only reports it in dry run', async () => {
    const paths = unitPaths();
    const applied = await service(1000, 'apply', paths).procmon(
      'netmon-appliance.service',
      'restart',
    );
    expect(applied).toBe('netmon-appliance.service: restart done');
    expect(helper.requests).toEqual([
      { v: 1, op: 'service.action', args: { unit: 'netmon-appliance.service', action: 'restart' } },
    ]);
    const dry = await service(1000, 'dry-run', paths).procmon('netmon-appliance.service', 'stop');
    expect(dry).toMatch(/^Dry run .*would stop netmon-appliance.service/);
    expect(helper.requests).toHaveLength(1);
    helper.answer = () => ({ ok: false, code: 'unsupported', message: 'no systemd' });
    await expect(
      service(1000, 'apply', paths).procmon('netmon-appliance.service', 'reload'),
    ).rejects.toMatchObject({ status: 500 });
    await expect(
      service(1000, 'apply', paths).procmon('other.service', 'reload'),
    ).rejects.toMatchObject({
      status: 400,
    });
  });

  it('listing services where systemctl cannot answer (no systemd running) is the honest failure', async () => {
    if (fs.existsSync('/run/systemd/system')) return; // a real systemd host answers
    await expect(service(1000, 'dry-run', unitPaths()).services()).rejects.toThrow(
      /systemctl is not reachable|systemctl is not installed/,
    );
  });
});

describe('engines and the host configuration', () => {
  it('procmon and restartAppliance answer 500 naming an engine that fails to start; no registry is the failure', async () => {
    const registry = new EngineRegistry();
    let fail = false;
    registry.register({
      name: 'flaky',
      start: async () => {
        if (fail) throw new Error('port in use');
      },
      stop: async () => {},
    });
    registry.register({ name: 'steady', start: async () => {}, stop: async () => {} });
    await registry.startAll();
    const settings = new SettingsService(ctx, {
      registry: () => registry,
      helper: new RootHelperClient({ socketPath: helper.socketPath }),
      mode: 'dry-run',
      paths: DEFAULT_HOST_PATHS,
    });
    fail = true;
    await expect(settings.procmon('flaky', 'restart')).rejects.toMatchObject({
      status: 500,
      message: 'flaky failed to start: port in use',
    });
    expect(await settings.restartAppliance()).toEqual({
      restarted: ['steady'],
      failed: ['flaky (port in use)'],
    });
    const orphan = new SettingsService(ctx, {
      registry: () => null,
      helper: new RootHelperClient({ socketPath: helper.socketPath }),
      mode: 'dry-run',
      paths: DEFAULT_HOST_PATHS,
    });
    await expect(orphan.services()).rejects.toThrow('The service controller is not reachable.');
  });

  it("getNetworkInfo's config comes from the ifupdown file", async () => {
    const file = path.join(dir, 'interfaces');
    fs.writeFileSync(
      file,
      'auto lo\niface lo inet static\n  address 127.0.0.1\n  netmask 255.0.0.0\n  dns-nameservers 127.0.0.53\n',
    );
    const settings = service(1000, 'dry-run', { ...DEFAULT_HOST_PATHS, networkInterfaces: file });
    const lo = (await settings.networkInfo()).find((i) => i.name === 'lo');
    expect(lo?.config).toEqual({
      'allow-hotplug': false,
      auto: true,
      type: 'static',
      address: '127.0.0.1',
      netmask: '255.0.0.0',
      gateway: null,
      'dns-nameservers': ['127.0.0.53'],
      use_sniffer: false,
      use_suricata: false,
    });
  });
});
