/**
 * 0014_alerting.sql on a database that already holds legacy alerts and firings (0005's shape):
 * the rebuild keeps them, the purge triggers still remove a deleted tracker's alerts, URL
 * trackers can now hold alerts, and every class has its seeded default template.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../platform/db/database.js';
import { loadMigrations, migrate } from '../../platform/db/migrate.js';

describe('0014_alerting migration', () => {
  it('rebuilds the legacy catalogue keeping rows, firings and purge triggers', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'alerting-migration-'));
    const db = openDatabase(path.join(dir, 'db.sqlite'));
    const all = loadMigrations();
    const before = all.filter(
      (m) => m.name !== 'alerting' && m.id < all.find((x) => x.name === 'alerting')!.id,
    );
    migrate(db, 1, before);
    db.prepare(
      "INSERT INTO legacy_alerts (device_id, tracker_kind, tracker_id, alert_type, active, last_state, created_at, updated_at) SELECT 1, 'latency', id, 'linkstate', 1, 1, 1, 1 FROM latency_trackers",
    ).run();
    const alertId = db.prepare('SELECT id FROM legacy_alerts').pluck().get() as number;
    db.prepare(
      "INSERT INTO legacy_alert_events (alert_id, ts, message) VALUES (?, 5, 'was down')",
    ).run(alertId);
    migrate(db, 2, all);
    expect(db.prepare('SELECT id, device_id, severity FROM legacy_alerts').all()).toEqual([
      { id: alertId, device_id: 1, severity: 3 },
    ]);
    expect(db.prepare('SELECT message FROM legacy_alert_events').pluck().all()).toEqual([
      'was down',
    ]);
    // URL trackers (no device) can hold alerts now.
    db.prepare(
      "INSERT INTO legacy_alerts (device_id, tracker_kind, tracker_id, alert_type, created_at, updated_at) VALUES (NULL, 'url', 7, 'down', 1, 1)",
    ).run();
    // The purge trigger of latency trackers still removes their alerts (and their firings).
    db.prepare('DELETE FROM latency_trackers').run();
    expect(
      db.prepare("SELECT count(*) FROM legacy_alerts WHERE tracker_kind = 'latency'").pluck().get(),
    ).toBe(0);
    expect(db.prepare('SELECT count(*) FROM legacy_alert_events').pluck().get()).toBe(0);
    // One seeded default template per class, the class pointing at it.
    const classes = db
      .prepare(
        'SELECT c.name, t.class FROM alert_classes c JOIN email_templates t ON t.id = c.default_email_template_id ORDER BY c.position',
      )
      .all() as { name: string; class: string }[];
    expect(classes.map((c) => c.name)).toEqual([
      'syslog_log',
      'event_log',
      'eve_log',
      'legacy_device_down',
      'legacy_link_state',
      'legacy_url_down', // 0017
    ]);
    for (const c of classes) expect(c.class).toBe(c.name);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
