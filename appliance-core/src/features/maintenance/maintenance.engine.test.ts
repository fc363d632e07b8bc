/**
 * Scheduled partition maintenance on the platform scheduler, in virtual time over a real file
 * database: the default schedules (walks_log weekly, eve_log daily at 00:00 UTC) rotate, a
 * schedule changed through the service reaches the scheduler at once, and the hourly retention
 * job drops partitions past 84 days (and returns their space).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { ensureIncrementalVacuum, migrate } from '../../platform/db/migrate.js';
import {
  DAILY_ROTATION,
  DEFAULT_RETENTION_DAYS,
  definePartitionedTable,
  WEEKLY_ROTATION,
  type PartitionedTable,
} from '../../platform/db/partitions.js';
import { Scheduler, type Timers } from '../../platform/scheduler/scheduler.js';
import { DAY_MS } from '../../platform/time/time.js';
import { MaintenanceEngine } from './maintenance.engine.js';
import { MaintenanceService } from './maintenance.service.js';

/** Virtual time: timers fire only when the test advances the clock. */
class VirtualTime implements Timers {
  private pending: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  constructor(public now: number) {}
  clock = { now: () => this.now };
  setTimeout(fn: () => void, ms: number) {
    const id = ++this.ids;
    this.pending.push({ at: this.now + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }
  async advance(ms: number) {
    const end = this.now + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      this.pending.sort((a, b) => a.at - b.at);
      const next = this.pending[0];
      if (!next || next.at > end) break;
      this.pending.shift();
      this.now = next.at;
      next.fn();
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    }
    this.now = end;
    await new Promise((r) => setImmediate(r));
  }
}

// Wednesday 2026-11-25 12:00 UTC.
const START = Date.UTC(2026, 10, 25, 12, 0, 0);

let dir: string;
let db: DB;
let time: VirtualTime;
let scheduler: Scheduler;
let service: MaintenanceService;
let engine: MaintenanceEngine;
let walks: PartitionedTable;
let eve: PartitionedTable;

const insertWalk = (at: number) =>
  db
    .prepare(
      `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (1, ?, 'crawl', 0, 1, ?)`,
    )
    .run(at, 'x'.repeat(2000));
const insertEve = (at: number) =>
  db
    .prepare(
      `INSERT INTO eve_log_latest (timestamp, signature_id, signature, severity, src_ip, dst_ip, raw) VALUES (?, 1, 's', 1, '127.0.0.1', '127.0.0.2', '{}')`,
    )
    .run(at);

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maintenance-engine-'));
  db = openDatabase(path.join(dir, 'appliance.db'));
  ensureIncrementalVacuum(db);
  migrate(db, START);
  const log = { listed: true, retentionDays: DEFAULT_RETENTION_DAYS };
  walks = definePartitionedTable(db, {
    name: 'walks_log',
    timeColumn: 'timestamp',
    maintenance: { ...log, rotationCron: WEEKLY_ROTATION },
  });
  eve = definePartitionedTable(db, {
    name: 'eve_log',
    timeColumn: 'timestamp',
    maintenance: { ...log, rotationCron: DAILY_ROTATION },
  });
  time = new VirtualTime(START);
  scheduler = new Scheduler(time.clock, time, () => 0);
  service = new MaintenanceService(db, time.clock, [], pino({ level: 'silent' }));
  engine = new MaintenanceEngine(service, scheduler, pino({ level: 'silent' }));
  await engine.start();
  await scheduler.start();
});
afterEach(async () => {
  await scheduler.stop();
  await engine.stop();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('scheduled rotation', () => {
  it('rotates log tables daily at 00:00 UTC and walks_log weekly on Monday', async () => {
    insertEve(START);
    insertWalk(START);
    await time.advance(12 * 3_600_000 - 1000); // Wednesday 23:59:59
    expect(eve.partitions()).toEqual(['eve_log_latest']);
    await time.advance(2000); // Thursday 00:00:01
    expect(eve.partitions()).toEqual(['eve_log_latest', 'eve_log_p20261126']);
    expect(walks.partitions()).toEqual(['walks_log_latest']);
    await time.advance(4 * DAY_MS); // past Monday 2026-11-30 00:00
    expect(walks.partitions()).toEqual(['walks_log_latest', 'walks_log_p20261130']);
  });

  it('follows a schedule changed through the service at once', async () => {
    insertEve(START);
    expect(service.updateCronSchedule(eve, '*/10 * * * *')).toBe(eve.settings()?.jobId);
    await time.advance(10 * 60_000);
    expect(eve.partitions()).toHaveLength(2);
    insertEve(time.now);
    await time.advance(10 * 60_000);
    expect(eve.partitions()).toHaveLength(3);
    // A refused schedule changes nothing.
    expect(service.updateCronSchedule(eve, '@hourly')).toBeNull();
    expect(eve.settings()?.cronSchedule).toBe('*/10 * * * *');
  });
});

describe('retention', () => {
  it('drops partitions past 84 days, hourly, and returns their space', async () => {
    for (let i = 0; i < 200; i++) insertWalk(START - 90 * DAY_MS + i);
    walks.rotate(START - 89 * DAY_MS);
    insertWalk(START - 10 * DAY_MS);
    walks.rotate(START - 9 * DAY_MS);
    const dropped = walks.partitions()[2];
    const pagesBefore = db.pragma('page_count', { simple: true }) as number;
    await time.advance(3_600_000);
    expect(walks.partitions()).not.toContain(dropped);
    expect(walks.partitions()).toHaveLength(2);
    expect(db.pragma('page_count', { simple: true }) as number).toBeLessThan(pagesBefore - 50);
  });
});
