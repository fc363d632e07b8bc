/**
 * The scheduled retention pruner against a real SQLite file and a real storage writer, with
 * every owner's registration as the composition root makes it: after an hour of virtual time,
 * each table that grows has lost exactly its rows older than its retention and kept the rest;
 * open alert occurrences and pending deliveries survive; walks_log loses a whole dated
 * partition (dropped, never row-deleted: the live partition's old rows stay) and captures
 * lose their ended files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerAuditRetention } from '../../platform/audit/audit-log.js';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { ensureIncrementalVacuum, migrate } from '../../platform/db/migrate.js';
import {
  DEFAULT_RETENTION_DAYS,
  definePartitionedTable,
  WEEKLY_ROTATION,
  type PartitionedTable,
} from '../../platform/db/partitions.js';
import { RetentionRegistry } from '../../platform/db/retention.js';
import { StorageWriter } from '../../platform/db/storage-writer.js';
import { Scheduler, type Timers } from '../../platform/scheduler/scheduler.js';
import { DAY_MS, HOUR_MS } from '../../platform/time/time.js';
import { registerAlertRetention, registerDeliveryRetention } from '../alerts/index.js';
import { registerFlowRetention } from '../flows/index.js';
import { registerLogRetention } from '../logs/index.js';
import { registerTrackerRetention } from '../trackers/index.js';
import { registerUrlRetention } from '../url-monitors/index.js';
import { MaintenanceService } from './maintenance.service.js';
import { RetentionEngine } from './retention.engine.js';
import { registerPartitionRetention } from './retention.service.js';

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
    for (let guard = 0; guard < 1000; guard++) {
      this.pending.sort((a, b) => a.at - b.at);
      const next = this.pending[0];
      if (!next || next.at > end) break;
      this.pending.shift();
      this.now = next.at;
      next.fn();
    }
    this.now = end;
  }
}

const START = Date.UTC(2026, 10, 25, 12, 0, 0);
const OLD = START - 500 * DAY_MS; // older than every default retention
const DAYS_AGO = (days: number) => START - days * DAY_MS;

let dir: string;
let db: DB;
let time: VirtualTime;
let scheduler: Scheduler;
let storage: StorageWriter;
let registry: RetentionRegistry;
let engine: RetentionEngine;
let walks: PartitionedTable;

const n = (sql: string, ...params: unknown[]) =>
  (db.prepare(sql).get(...params) as { n: number }).n;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retention-engine-'));
  db = openDatabase(path.join(dir, 'appliance.db'));
  ensureIncrementalVacuum(db);
  migrate(db, START);
  walks = definePartitionedTable(db, {
    name: 'walks_log',
    timeColumn: 'timestamp',
    maintenance: {
      listed: true,
      rotationCron: WEEKLY_ROTATION,
      retentionDays: DEFAULT_RETENTION_DAYS,
    },
  });
  time = new VirtualTime(START);
  scheduler = new Scheduler(time.clock, time, () => 0);
  storage = new StorageWriter(db, { onError: () => {} });
  storage.start();
  const log = pino({ level: 'silent' });
  const maintenance = new MaintenanceService(db, time.clock, [], log);
  registry = new RetentionRegistry(db);
  registerPartitionRetention(registry, maintenance);
  registerFlowRetention(registry, db, storage);
  registerLogRetention(registry, db, storage);
  registerTrackerRetention(registry, db, storage);
  registerUrlRetention(registry, db, storage);
  registerAlertRetention(registry, db, storage);
  registerDeliveryRetention(registry, db, storage);
  registerAuditRetention(registry, db, storage);
  engine = new RetentionEngine(registry, scheduler, time.clock, log);
  await engine.start();
  await scheduler.start();
});
afterEach(async () => {
  await scheduler.stop();
  await engine.stop();
  await storage.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Rows at these ages (days) in every table; each table's retention is set to 10 days. */
const AGES = [500, 40, 11, 9, 1];

function seed(): void {
  const d = (sql: string, ...params: unknown[]) => db.prepare(sql).run(...params);
  d(
    "INSERT OR IGNORE INTO devices (id, label, ip_address, profile, created_at, updated_at) VALUES (1, 'd', '127.0.0.1', 'p', 0, 0)",
  );
  d(
    "INSERT INTO url_trackers (id, url, pattern, created_at, updated_at) VALUES (1, 'https://127.0.0.1/', '', 0, 0)",
  );
  d(
    "INSERT INTO legacy_alerts (id, device_id, tracker_kind, tracker_id, alert_type, created_at, updated_at) VALUES (1, 1, 'latency', 1, 'device_down', 0, 0)",
  );
  for (const [i, age] of AGES.entries()) {
    const ts = DAYS_AGO(age);
    for (const tracker of [1, 2, 3]) {
      d('INSERT INTO latency_samples VALUES (?, ?, 1, 0)', tracker, ts);
      d('INSERT INTO port_samples VALUES (?, ?, 1)', tracker, ts);
      d('INSERT INTO disk_samples VALUES (?, ?, 1, 2)', tracker, ts);
      d('INSERT INTO interface_samples VALUES (?, ?, 1, 2, 1)', tracker, ts);
      d("INSERT INTO oid_samples VALUES (?, ?, '1')", tracker, ts);
      for (const kind of ['latency', 'oid'])
        for (const resolution of [300_000, 3_600_000])
          d(
            'INSERT INTO sample_rollups VALUES (?, ?, ?, ?, 1, 1, 1, 1)',
            kind,
            tracker,
            resolution,
            ts,
          );
    }
    d('INSERT INTO url_samples (tracker_id, ts, ok, latency) VALUES (1, ?, 1, 1)', ts);
    d('INSERT INTO syslog_minute_rollup VALUES (?, 1, 3, 5)', ts);
    d('INSERT INTO eventlog_minute_rollup VALUES (?, 1, 3, 5)', ts);
    d('INSERT INTO eve_minute_rollup VALUES (?, 1, 0, 1, 5)', ts);
    d(
      "INSERT INTO flow_conversations VALUES (?, '10.0.0.1', '10.0.0.2', 80, 6, '127.0.0.1', 0, 0, 0, '[]', 1, 1, 1, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL)",
      ts,
      ts,
      ts,
    );
    const occurrence = d(
      "INSERT INTO alert_occurrences (source, alert_id, alert_label, alert_class, severity, opened_at, closed_at) VALUES ('modern', 1, 'a', 'syslog', 3, ?, ?)",
      ts,
      ts + 1,
    ).lastInsertRowid;
    d(
      "INSERT INTO alert_notifications (occurrence_id, outlet_id, outlet_name, queued_at) VALUES (?, 1, 'o', ?)",
      occurrence,
      ts,
    );
    d("INSERT INTO legacy_alert_events (alert_id, ts, message) VALUES (1, ?, 'down')", ts);
    const delivery = d(
      "INSERT INTO alert_deliveries (id, outlet_id, outlet_name, outlet_type, alert_label, severity, notification, target_sealed, status, created_at) VALUES (?, 1, 'o', 'webhook', 'a', 3, '{}', 'x', 'sent', ?)",
      100 + i,
      ts,
    ).lastInsertRowid;
    d(
      "INSERT INTO alert_delivery_attempts (delivery_id, outlet_id, attempt, started_at, outcome) VALUES (?, 1, 1, ?, 'sent')",
      delivery,
      ts,
    );
    d(
      "INSERT INTO audit_log (at, actor, action, outcome) VALUES (?, 'system', 'x.y', 'success')",
      ts,
    );
  }
  // Never pruned: an open occurrence and a pending delivery, however old.
  d(
    "INSERT INTO alert_occurrences (source, alert_id, alert_label, alert_class, severity, opened_at) VALUES ('modern', 2, 'open', 'syslog', 3, ?)",
    OLD,
  );
  d(
    "INSERT INTO alert_deliveries (id, outlet_id, outlet_name, outlet_type, alert_label, severity, notification, target_sealed, status, created_at) VALUES (999, 1, 'o', 'webhook', 'a', 3, '{}', 'x', 'pending', ?)",
    OLD,
  );
}

const TIME_OF: Record<string, string> = {
  latency_samples: 'ts',
  port_samples: 'ts',
  disk_samples: 'ts',
  interface_samples: 'ts',
  oid_samples: 'ts',
  url_samples: 'ts',
  syslog_minute_rollup: 'minute',
  eventlog_minute_rollup: 'minute',
  eve_minute_rollup: 'minute',
  flow_conversations: 'hour',
  legacy_alert_events: 'ts',
  audit_log: 'at',
};

describe('the retention pruner', () => {
  it("removes exactly what is past each row's retention, hourly, and keeps the rest", async () => {
    seed();
    const ten = registry.list().map((row) => ({ id: row.id, retention: 10 }));
    expect(registry.set(ten, START).ok).toBe(true);
    // Nothing runs before the hour.
    await time.advance(HOUR_MS - 1000);
    expect(n('SELECT count(*) AS n FROM audit_log')).toBe(AGES.length);
    await time.advance(1000);
    for (let i = 0; i < 200 && n('SELECT count(*) AS n FROM audit_log') > 2; i++)
      await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 200)); // the rest of the run (rows after audit_log)
    const cutoff = START + HOUR_MS - 10 * DAY_MS;
    for (const [table, column] of Object.entries(TIME_OF)) {
      expect(n(`SELECT count(*) AS n FROM ${table} WHERE ${column} < ?`, cutoff), table).toBe(0);
      expect(n(`SELECT count(*) AS n FROM ${table} WHERE ${column} >= ?`, cutoff), table).toBe(
        table.endsWith('_samples') && table !== 'url_samples' ? 2 * 3 : 2,
      );
    }
    for (const resolution of [300_000, 3_600_000]) {
      expect(
        n(
          'SELECT count(*) AS n FROM sample_rollups WHERE resolution = ? AND ts < ?',
          resolution,
          cutoff,
        ),
      ).toBe(0);
      expect(n('SELECT count(*) AS n FROM sample_rollups WHERE resolution = ?', resolution)).toBe(
        2 * 2 * 3,
      );
    }
    // Closed occurrences past retention went with their notifications; the open one stayed.
    expect(n('SELECT count(*) AS n FROM alert_occurrences WHERE closed_at IS NOT NULL')).toBe(2);
    expect(n('SELECT count(*) AS n FROM alert_occurrences WHERE closed_at IS NULL')).toBe(1);
    expect(n('SELECT count(*) AS n FROM alert_notifications')).toBe(2);
    // Settled deliveries past retention went with their attempts; the pending one stayed.
    expect(n("SELECT count(*) AS n FROM alert_deliveries WHERE status = 'sent'")).toBe(2);
    expect(n('SELECT count(*) AS n FROM alert_deliveries WHERE id = 999')).toBe(1);
    expect(n('SELECT count(*) AS n FROM alert_delivery_attempts')).toBe(2);
  });

  it('sheds walks_log by dropping whole partitions, never deleting rows of the live one', async () => {
    const insert = (at: number) =>
      db
        .prepare(
          `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (1, ?, 'crawl', 0, 1, '[]')`,
        )
        .run(at);
    insert(DAYS_AGO(30));
    walks.rotate(DAYS_AGO(29));
    insert(DAYS_AGO(5));
    walks.rotate(DAYS_AGO(4));
    insert(DAYS_AGO(40)); // an old row in the live partition: a partition drop never touches it
    const oldPartition = walks.partitions()[2] as string;
    const id = registry.list().find((row) => row.table === 'walks_log')?.id as number;
    expect(registry.set([{ id, retention: 10 }], START).ok).toBe(true);
    expect(walks.settings()?.retentionDays).toBe(10);
    await time.advance(HOUR_MS);
    for (let i = 0; i < 200 && walks.partitions().includes(oldPartition); i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(walks.partitions()).not.toContain(oldPartition);
    expect(walks.partitions()).toHaveLength(2);
    expect(n('SELECT count(*) AS n FROM walks_log_latest')).toBe(1);
  });
});
