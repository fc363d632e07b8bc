/**
 * The sliced window walk of the log lists (log-list.repository.ts) on a migrated database:
 * order and paging across slices and partitions, the capped total, the time budget answering
 * partial, the rollup-plus-edges summary agreeing with the rows, and the query plans that keep
 * every statement on an index (never a scan of the partition).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { PartitionedTable } from '../../platform/db/partitions.js';
import {
  countBySeverity,
  countRowsBySeverity,
  listWindow,
  rollupRanges,
  TOTAL_CAP,
} from './log-list.repository.js';

const ROWS = 50_000;
const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
let dir: string;
let db: DB;
let table: PartitionedTable;
const all = { sql: '1', params: [] };

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-list-'));
  db = openDatabase(path.join(dir, 'db.sqlite'));
  migrate(db, T0);
  const insert = db.prepare(
    `INSERT INTO syslog_log_latest (device_id, timestamp, facility, severity, source, message, sender, malformed) VALUES (?, ?, 1, ?, 'app', ?, '127.0.0.1', 0)`,
  );
  const rollup = db.prepare(
    'INSERT INTO syslog_minute_rollup (minute, device_id, severity, count) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1',
  );
  table = new PartitionedTable(db, { name: 'syslog_log', timeColumn: 'timestamp' });
  db.transaction(() => {
    // 10 rows a second; the first half in a partition rotated away, the second in the latest.
    for (let i = 0; i < ROWS; i++) {
      if (i === ROWS / 2) table.rotate(T0);
      const at = T0 + i * 100;
      insert.run(i % 2 === 0 ? 1 : 2, at, i % 8, `row ${i}${i === 7 ? ' needle' : ''}`);
      rollup.run(at - (at % 60_000), i % 2 === 0 ? 1 : 2, i % 8);
    }
  })();
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const window = { start: T0, end: T0 + ROWS * 100 };

describe('listWindow', () => {
  it('reads newest first, pages across slices and partitions, and caps the total', () => {
    expect(table.partitions()).toHaveLength(2);
    const first = listWindow<{ message: string }>(db, table, {
      columns: 'message',
      where: all,
      ...window,
      offset: 0,
      limit: 3,
      deadline: Date.now() + 5000,
    });
    expect(first.rows.map((r) => r.message)).toEqual(['row 49999', 'row 49998', 'row 49997']);
    expect(first).toMatchObject({ totalCapped: true, partial: false });
    expect(first.total).toBeGreaterThanOrEqual(TOTAL_CAP);
    // A page that straddles the partition boundary (rows 25000 and 24999).
    const straddle = listWindow<{ message: string }>(db, table, {
      columns: 'message',
      where: all,
      ...window,
      offset: ROWS / 2 - 2,
      limit: 4,
      deadline: Date.now() + 5000,
    });
    expect(straddle.rows.map((r) => r.message)).toEqual([
      'row 25001',
      'row 25000',
      'row 24999',
      'row 24998',
    ]);
  });

  it('counts exactly when the window is walked to its start', () => {
    const filtered = listWindow(db, table, {
      columns: 'id',
      where: { sql: 'severity = ?', params: [7] },
      start: T0,
      end: T0 + 10_000 * 100 - 1,
      offset: 0,
      limit: 1,
      deadline: Date.now() + 5000,
    });
    expect(filtered).toMatchObject({ total: 1250, totalCapped: false, partial: false });
  });

  it('stops counting once the page is complete and the count budget is spent (total a lower bound)', () => {
    let t = 0;
    const clock = () => (t += 150);
    const result = listWindow<{ message: string }>(
      db,
      table,
      {
        columns: 'message',
        where: { sql: 'severity = ?', params: [7] },
        ...window,
        offset: 0,
        limit: 3,
        deadline: 1_000_000,
      },
      clock,
    );
    expect(result.rows.map((r) => r.message)).toEqual(['row 49999', 'row 49991', 'row 49983']);
    expect(result).toMatchObject({ totalCapped: true, partial: false });
    expect(result.total).toBeLessThan(TOTAL_CAP);
  });

  it('answers what it found with partial: true when the budget runs out between slices', () => {
    let calls = 0;
    const clock = () => (calls++ === 0 ? 0 : 10);
    const result = listWindow<{ message: string }>(
      db,
      table,
      {
        columns: 'message',
        where: { sql: "message LIKE ? ESCAPE '\\'", params: ['%needle%'] },
        ...window,
        offset: 0,
        limit: 10,
        deadline: 5,
      },
      clock,
    );
    expect(result).toMatchObject({ rows: [], partial: true });
    expect(result.total).toBe(0);
    const complete = listWindow<{ message: string }>(db, table, {
      columns: 'message',
      where: { sql: "message LIKE ? ESCAPE '\\'", params: ['%needle%'] },
      ...window,
      offset: 0,
      limit: 10,
      deadline: Date.now() + 5000,
    });
    expect(complete).toMatchObject({
      rows: [{ message: 'row 7 needle' }],
      total: 1,
      partial: false,
    });
  });
  it('reads its newest slice even when the deadline passed before the walk began', () => {
    const stale = listWindow<{ message: string }>(
      db,
      table,
      {
        columns: 'message',
        where: { sql: 'severity = ?', params: [7] },
        ...window,
        offset: 0,
        limit: 2,
        deadline: 0,
      },
      () => 1_000,
    );
    expect(stale.rows.map((r) => r.message)).toEqual(['row 49999', 'row 49991']);
    expect(stale.partial).toBe(true);
    expect(stale.total).toBeGreaterThanOrEqual(2);
    const counted = countRowsBySeverity(db, table, all, window.start, window.end, 0, () => 1_000);
    expect(counted.partial).toBe(true);
    expect([...counted.counts.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});

describe('rollup-guided walk', () => {
  // Ten minutes a day before the fixture, one row a second of severity 6, severity 0 only at
  // seconds 30 (minute 0), 250 and 260 (minute 4): the rollup says where the 0s are.
  const DAY0 = T0 - 86_400_000;
  const quiet = { start: DAY0, end: DAY0 + 600_000 - 1 };
  const emergency = { sql: 'severity = ?', params: [0] };
  beforeAll(() => {
    const insert = db.prepare(
      `INSERT INTO syslog_log_latest (device_id, timestamp, facility, severity, source, message, sender, malformed) VALUES (1, ?, 1, ?, 'app', ?, '127.0.0.1', 0)`,
    );
    const rollup = db.prepare(
      'INSERT INTO syslog_minute_rollup (minute, device_id, severity, count) VALUES (?, 1, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1',
    );
    db.transaction(() => {
      for (let k = 0; k < 600; k++) {
        const at = DAY0 + k * 1000;
        const severity = k === 30 || k === 250 || k === 260 ? 0 : 6;
        insert.run(at, severity, `quiet ${k}`);
        rollup.run(at - (at % 60_000), severity);
      }
    })();
  });

  it('reads only the minutes whose rollup rows hold the level, newest first, clipped to the window', () => {
    expect(rollupRanges(db, 'syslog_minute_rollup', emergency, quiet.start, quiet.end)).toEqual([
      [DAY0 + 240_000, DAY0 + 299_999],
      [DAY0, DAY0 + 59_999],
    ]);
    // Adjacent minutes merge; the window's edges clip the first and last.
    expect(
      rollupRanges(
        db,
        'syslog_minute_rollup',
        { sql: 'severity = ?', params: [6] },
        DAY0 + 10_000,
        DAY0 + 130_000,
      ),
    ).toEqual([[DAY0 + 10_000, DAY0 + 130_000]]);
    const ranges = rollupRanges(db, 'syslog_minute_rollup', emergency, quiet.start, quiet.end);
    const request = {
      columns: 'message',
      where: emergency,
      ...quiet,
      offset: 0,
      limit: 10,
      deadline: Date.now() + 5000,
    };
    const guided = listWindow<{ message: string }>(db, table, { ...request, ranges });
    expect(guided.rows.map((r) => r.message)).toEqual(['quiet 260', 'quiet 250', 'quiet 30']);
    expect(guided).toMatchObject({ total: 3, totalCapped: false, partial: false });
    expect(listWindow(db, table, request)).toEqual(guided);
  });

  it('relies on the rollup counting every row: a row the rollup misses is not walked', () => {
    const at = DAY0 + 420_500;
    const id = db
      .prepare(
        `INSERT INTO syslog_log_latest (device_id, timestamp, facility, severity, source, message, sender, malformed) VALUES (1, ?, 1, 0, 'app', 'uncounted', '127.0.0.1', 0)`,
      )
      .run(at).lastInsertRowid;
    try {
      const request = {
        columns: 'message',
        where: emergency,
        ...quiet,
        offset: 0,
        limit: 10,
        deadline: Date.now() + 5000,
      };
      const ranges = rollupRanges(db, 'syslog_minute_rollup', emergency, quiet.start, quiet.end);
      expect(listWindow(db, table, { ...request, ranges }).total).toBe(3);
      expect(listWindow(db, table, request).total).toBe(4);
    } finally {
      db.prepare('DELETE FROM syslog_log_latest WHERE id = ?').run(id);
    }
  });
});

describe('severity counts', () => {
  it('from the rollup with edge minutes from rows equals counting every row', () => {
    const start = T0 + 12_345;
    const end = T0 + 40_000 * 100 + 6_789;
    const fromRows = countRowsBySeverity(db, table, all, start, end, Date.now() + 5000);
    const fromRollup = countBySeverity(
      db,
      table,
      'syslog_minute_rollup',
      all,
      all,
      start,
      end,
      Date.now() + 5000,
    );
    expect(fromRollup.counts).toEqual(fromRows.counts);
    const total = [...fromRows.counts.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(
      db
        .prepare('SELECT count(*) FROM syslog_log WHERE timestamp BETWEEN ? AND ?')
        .pluck()
        .get(start, end),
    );
  });
});

describe('query plans', () => {
  const plan = (sql: string) =>
    (
      db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(sql.split('?').length - 1).fill(1)) as {
        detail: string;
      }[]
    )
      .map((r) => r.detail)
      .join('\n');

  it('walks a window on the time index: slice cuts, counts and page reads never scan', () => {
    const cut = plan(
      'SELECT timestamp FROM syslog_log_latest WHERE timestamp >= ? AND timestamp <= ? ORDER BY timestamp DESC LIMIT 1 OFFSET ?',
    );
    expect(cut).toMatch(/USING COVERING INDEX syslog_log_latest_(g\d+_)?by_time/);
    const read = plan(
      'SELECT id, message FROM syslog_log_latest WHERE timestamp >= ? AND timestamp <= ? AND (severity = ?) ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?',
    );
    expect(read).toMatch(/USING INDEX syslog_log_latest_(g\d+_)?by_time/);
    // Rows of one millisecond are put in id order; the window itself is never sorted.
    expect(read).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
    const severity = plan(
      'SELECT count(*) FROM syslog_log_latest WHERE timestamp >= ? AND timestamp <= ? AND (severity = ?)',
    );
    expect(severity).toMatch(/USING COVERING INDEX syslog_log_latest_(g\d+_)?by_time/);
    const scoped = plan(
      'SELECT count(*) FROM syslog_log_latest WHERE timestamp >= ? AND timestamp <= ? AND (device_id IN (SELECT value FROM json_each(?)))',
    );
    expect(scoped).toMatch(/USING (COVERING )?INDEX syslog_log_latest_(g\d+_)?by_(time|device)/);
    expect(scoped).not.toMatch(/SCAN syslog_log_latest(?! USING)/);
  });

  it('reads the rollup by its key', () => {
    expect(
      plan(
        'SELECT severity, sum(count) FROM syslog_minute_rollup WHERE minute >= ? AND minute < ? GROUP BY severity',
      ),
    ).toMatch(/SEARCH syslog_minute_rollup USING PRIMARY KEY/);
  });
});
