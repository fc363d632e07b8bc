/**
 * The retention policy endpoints over HTTP (spec part 3, "Data maintenance": getRetentionPolicy,
 * setRetentionPolicy) against a real appliance: the `system` gate, one row per table that grows
 * (throughput history has none), real sizes, every validation rule answering the legacy failure
 * body and changing nothing, and a saved policy reaching the partitioned tables' own settings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};

const ROWS = [
  'alert_deliveries',
  'alert_occurrences',
  'audit_log',
  'captures',
  'disk_samples',
  'eve_log',
  'eve_minute_rollup',
  'eventlog_log',
  'eventlog_minute_rollup',
  'flow_conversations',
  'flows',
  'interface_samples',
  'latency_samples',
  'legacy_alert_events',
  'oid_samples',
  'port_samples',
  'sample_rollups_1h',
  'sample_rollups_5m',
  'syslog_log',
  'syslog_minute_rollup',
  'url_samples',
  'walks_log',
];

interface Row {
  id: number;
  table: string;
  retention: number;
  size: number;
}

let h: Harness;
let system: string;
let other: string;

const stored = () => h.appliance.db.prepare('SELECT * FROM retention_policies ORDER BY id').all();
const list = async () => {
  const res = await h.request('GET', '/api/getRetentionPolicy', { token: system });
  expect(res.status).toBe(200);
  return res.body.message as Row[];
};
const idOf = async (table: string) => (await list()).find((r) => r.table === table)?.id as number;
const set = (body: unknown, token = system) =>
  h.request('POST', '/api/setRetentionPolicy', { token, body });

beforeAll(async () => {
  h = await startAppliance();
  system = (await h.userWith(['system'])).token;
  other = (await h.userWith(['devices', 'logs', 'write_devices'])).token;
});
afterAll(async () => {
  await h.close();
});

describe('GET /api/getRetentionPolicy', () => {
  it('lists one row per table that grows, with days and real sizes; no throughput history row', async () => {
    const res = await h.request('GET', '/api/getRetentionPolicy', { token: system });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(201);
    expect(res.body.hasError).toBe(false);
    const rows = res.body.message as Row[];
    expect(rows.map((r) => r.table).sort()).toEqual(ROWS);
    expect(rows.map((r) => r.table)).not.toContain('throughput_history');
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(['id', 'retention', 'size', 'table']);
      expect(row.retention).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(row.size)).toBe(true);
    }
    // Sizes are dbstat's: audit_log's row is exactly its table's and indexes' pages.
    const audit = rows.find((r) => r.table === 'audit_log') as Row;
    const pages = h.appliance.db
      .prepare(
        "SELECT sum(pgsize) AS n FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'audit_log')",
      )
      .get() as { n: number };
    expect(audit.size).toBe(pages.n);
    // A partitioned table starts with the days its partition maintenance holds.
    const walks = rows.find((r) => r.table === 'walks_log') as Row;
    expect(walks.retention).toBe(84);
  });

  it('grows the size of a row as its table grows', async () => {
    const before = (await list()).find((r) => r.table === 'latency_samples') as Row;
    const insert = h.appliance.db.prepare(
      'INSERT INTO latency_samples (tracker_id, ts, latency, loss) VALUES (?, ?, 1, 0)',
    );
    h.appliance.db.transaction(() => {
      for (let i = 0; i < 20_000; i++) insert.run(999, i);
    })();
    const after = (await list()).find((r) => r.table === 'latency_samples') as Row;
    expect(after.size).toBeGreaterThan(before.size + 200_000);
    h.appliance.db.prepare('DELETE FROM latency_samples WHERE tracker_id = 999').run();
  });
});

describe('POST /api/setRetentionPolicy', () => {
  it('denies callers without system (401, legacy body) and changes nothing', async () => {
    const before = stored();
    const denied = await set({ data: [{ id: 1, retention: 3 }] }, other);
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual(DENIED);
    const read = await h.request('GET', '/api/getRetentionPolicy', { token: other });
    expect(read.status).toBe(401);
    expect(read.body).toEqual(DENIED);
    expect(stored()).toEqual(before);
  });

  it('rejects every invalid submission whole with {status: false, hasError: true, message}', async () => {
    const audit = await idOf('audit_log');
    const walks = await idOf('walks_log');
    const before = stored();
    const bad: [unknown, RegExp][] = [
      [{}, /data/i],
      [{ data: [] }, /data/i],
      [{ data: 'x' }, /data/i],
      [{ data: [{ id: audit }] }, /retention/i],
      [{ data: [{ retention: 5 }] }, /id/i],
      [{ data: [{ id: 999_999, retention: 5 }] }, /no retention row has the id 999999/],
      [{ data: [{ id: audit, retention: 0 }] }, /retention/i],
      [{ data: [{ id: audit, retention: -1 }] }, /retention/i],
      [{ data: [{ id: audit, retention: 1.5 }] }, /retention/i],
      [{ data: [{ id: audit, retention: 'ten' }] }, /retention/i],
      [{ data: [{ id: audit, retention: null }] }, /retention/i],
      [{ data: [{ id: 'audit_log', retention: 5 }] }, /id/i],
      [{ data: [{ id: audit, retention: 36_501 }] }, /retention/i],
      [
        {
          data: [
            { id: audit, retention: 5 },
            { id: audit, retention: 6 },
          ],
        },
        /more than once/,
      ],
      // One bad row rejects the good ones with it.
      [
        {
          data: [
            { id: walks, retention: 7 },
            { id: 424_242, retention: 7 },
          ],
        },
        /Row 2/,
      ],
      [
        {
          data: [
            { id: walks, retention: 7 },
            { id: audit, retention: 0 },
          ],
        },
        /retention/i,
      ],
    ];
    for (const [body, message] of bad) {
      const res = await set(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body.status, JSON.stringify(body)).toBe(false);
      expect(res.body.hasError).toBe(true);
      expect(Object.keys(res.body).sort()).toEqual(['hasError', 'message', 'status']);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect(stored()).toEqual(before);
    const walksSettings = h.appliance.db
      .prepare("SELECT retention_days AS n FROM partitioned_tables WHERE table_name = 'walks_log'")
      .get() as { n: number };
    expect(walksSettings.n).toBe(84);
  });

  it('saves a valid submission, shown by getRetentionPolicy and kept by the partitioned table', async () => {
    const audit = await idOf('audit_log');
    const walks = await idOf('walks_log');
    const res = await set({
      data: [
        { id: audit, retention: 1 },
        { id: walks, retention: 21 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 201, hasError: false, message: 'Retention policy saved' });
    const rows = await list();
    expect(rows.find((r) => r.id === audit)?.retention).toBe(1);
    expect(rows.find((r) => r.id === walks)?.retention).toBe(21);
    const walksSettings = h.appliance.db
      .prepare("SELECT retention_days AS n FROM partitioned_tables WHERE table_name = 'walks_log'")
      .get() as { n: number };
    expect(walksSettings.n).toBe(21);
    // Audited without secrets.
    const entry = h.appliance.db
      .prepare("SELECT detail FROM audit_log WHERE action = 'retention.update' ORDER BY id DESC")
      .get() as { detail: string };
    expect(JSON.parse(entry.detail).rows).toEqual([`${audit}:1`, `${walks}:21`]);
  });
});
