import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config/config.js';
import { openDatabase } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { Scheduler } from '../../platform/scheduler/scheduler.js';
import { systemClock } from '../../platform/time/time.js';
import {
  defaultToolsOptions,
  parseWhoisServer,
  RETENTION_JOB_ID,
  ToolsEngine,
  ToolsService,
} from './tools.service.js';
import { DEFAULT_GEOIP_URL, DEFAULT_SPEEDTEST_URL } from './tools.runtime.js';

describe('tools settings', () => {
  it('defaults: public speed-test and geolocation services, whois picks the registry, port 5201', () => {
    const options = defaultToolsOptions(loadConfig({}, [], '/srv'));
    expect(options.speedtest.url).toBe(DEFAULT_SPEEDTEST_URL);
    expect(options.geoipUrl).toBe(DEFAULT_GEOIP_URL);
    expect(options.whoisServer).toBeNull();
    expect(options.iperfServerPort).toBe(5201);
    expect(options.iperfServerBind).toBeNull();
    expect(options.geoipDir).toBe('/srv/data/geoip');
    expect(options.reverseDns).toBeTypeOf('function');
  });

  it('reads APPLIANCE_SPEEDTEST_URL, APPLIANCE_GEOIP_URL (or off) and APPLIANCE_WHOIS_SERVER', () => {
    const options = defaultToolsOptions(
      loadConfig(
        {
          APPLIANCE_SPEEDTEST_URL: 'https://speed.example.net/',
          APPLIANCE_GEOIP_URL: 'https://geo.example.net/{ip}',
          APPLIANCE_WHOIS_SERVER: 'whois.example.net:4343',
        },
        [],
        '/srv',
      ),
    );
    expect(options.speedtest.url).toBe('https://speed.example.net/');
    expect(options.geoipUrl).toBe('https://geo.example.net/{ip}');
    expect(options.whoisServer).toEqual({ host: 'whois.example.net', port: 4343 });
    expect(
      defaultToolsOptions(loadConfig({ APPLIANCE_GEOIP_URL: 'off' }, [], '/srv')).geoipUrl,
    ).toBeNull();
  });

  it('refuses malformed settings at start', () => {
    expect(() => loadConfig({ APPLIANCE_SPEEDTEST_URL: 'ftp://x' })).toThrow(
      /APPLIANCE_SPEEDTEST_URL/,
    );
    expect(() => loadConfig({ APPLIANCE_GEOIP_URL: 'https://geo.example.net/' })).toThrow(
      /APPLIANCE_GEOIP_URL/,
    );
    expect(() => loadConfig({ APPLIANCE_WHOIS_SERVER: '-h evil' })).toThrow(
      /APPLIANCE_WHOIS_SERVER/,
    );
  });

  it('parses whois servers: host, host:port, [v6]:port; port 43 by default', () => {
    expect(parseWhoisServer('whois.ripe.net')).toEqual({ host: 'whois.ripe.net', port: 43 });
    expect(parseWhoisServer('127.0.0.1:4343')).toEqual({ host: '127.0.0.1', port: 4343 });
    expect(parseWhoisServer('[::1]:4343')).toEqual({ host: '::1', port: 4343 });
    expect(parseWhoisServer(undefined)).toBeNull();
    expect(parseWhoisServer('-h')).toBeNull();
    expect(parseWhoisServer('host:0')).toBeNull();
    expect(parseWhoisServer('host:70000')).toBeNull();
    expect(parseWhoisServer('a b')).toBeNull();
  });
});

describe('ToolsEngine', () => {
  const DAY = 86_400_000;
  const setup = () => {
    const db = openDatabase(':memory:');
    migrate(db, Date.now());
    const config = loadConfig({}, [], fs.mkdtempSync(path.join(os.tmpdir(), 'tools-engine-')));
    const log = pino({ level: 'silent' });
    const service = new ToolsService({ db, clock: systemClock, config, log }, { reverseDns: null });
    const insert = (ageMs: number) =>
      Number(
        db
          .prepare(
            "INSERT INTO throughput_history (created_at, kind, target, result) VALUES (?, 'speedtest', NULL, '{}')",
          )
          .run(Date.now() - ageMs).lastInsertRowid,
      );
    const exists = (id: number) =>
      (
        db.prepare('SELECT count(*) AS n FROM throughput_history WHERE id = ?').get(id) as {
          n: number;
        }
      ).n === 1;
    return { db, config, log, service, insert, exists };
  };

  it('prunes at start and on its hourly job (own scheduler), makes the geoip folder, and stops', async () => {
    const { config, log, service, insert, exists } = setup();
    const stale = insert(85 * DAY);
    const kept = insert(83 * DAY);
    const engine = new ToolsEngine(service, systemClock, log);
    await engine.start();
    expect(exists(stale)).toBe(false);
    expect(exists(kept)).toBe(true);
    expect(fs.statSync(path.join(config.dataDir, 'geoip')).isDirectory()).toBe(true);
    expect(engine.scheduler.has(RETENTION_JOB_ID)).toBe(true);
    const later = insert(90 * DAY);
    engine.scheduler.runSoon(RETENTION_JOB_ID);
    const deadline = Date.now() + 2000;
    while (exists(later) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(exists(later)).toBe(false);
    await engine.stop();
  });

  it('on a shared scheduler it adds its job and leaves starting and stopping to the owner', async () => {
    const { log, service } = setup();
    const shared = new Scheduler(systemClock);
    const engine = new ToolsEngine(service, systemClock, log, shared);
    expect(engine.scheduler).toBe(shared);
    await engine.start();
    expect(shared.has(RETENTION_JOB_ID)).toBe(true);
    await engine.stop();
    expect(shared.has(RETENTION_JOB_ID)).toBe(false);
    await shared.stop();
  });
});
