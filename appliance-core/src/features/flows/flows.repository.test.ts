/**
 * The flow list over partitions on a migrated database (flows.repository.ts): the merged
 * per-partition pages equal a plain sort of the view for narrow, wide and active windows, the
 * statements use the index the header promises (EXPLAIN QUERY PLAN: end_time for narrow
 * windows, bytes for wide ones, never a full scan), the rollup upsert keeps src_ports distinct
 * and capped at 64, and flows stays out of the spec's listed partitioned tables.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import {
  definePartitionedTable,
  listedPartitionedTables,
  maintainedPartitionedTables,
  type PartitionedTable,
} from '../../platform/db/partitions.js';
import { FLOW_RETENTION_DAYS, FLOW_ROTATION } from './flows-feature.service.js';
import { listFlows, WIDE_ROWS } from './flows.repository.js';
import { FLOW_COLUMNS, FLOW_STATEMENTS, ROLLUP_ROWS_PER_UPSERT } from './flows.writes.js';

const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
const ROWS = 120_000;
let dir: string;
let db: DB;
let table: PartitionedTable;
const all = { sql: '1', params: [] };

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flows-repo-'));
  db = openDatabase(path.join(dir, 'db.sqlite'));
  migrate(db, T0);
  table = definePartitionedTable(db, {
    name: 'flows',
    timeColumn: 'end_time',
    maintenance: { listed: false, rotationCron: FLOW_ROTATION, retentionDays: FLOW_RETENTION_DAYS },
  });
  const insert = db.prepare(
    `INSERT INTO flows_latest (${FLOW_COLUMNS}) VALUES (?, ?, '10.0.0.1', ?, '10.0.0.2', 443, 6, ?, 1, '127.0.0.1', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?)`,
  );
  const fill = (from: number, to: number) =>
    db.transaction(() => {
      // One flow every 100 ms; bytes a scrambled function of i (ties broken by id).
      for (let i = from; i < to; i++)
        insert.run(T0 + i * 100 - 500, T0 + i * 100, i % 65536, (i * 7919) % 100_003, T0);
    })();
  fill(0, ROWS / 2);
  table.rotate(T0 + (ROWS / 2) * 100);
  fill(ROWS / 2, ROWS);
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const plain = (
  endFrom: number,
  endTo: number,
  startFrom: number | null,
  offset: number,
  limit: number,
) =>
  db
    .prepare(
      `SELECT id, bytes FROM flows WHERE end_time >= ? AND end_time <= ? AND start_time >= ? ORDER BY bytes DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(endFrom, endTo, startFrom ?? -1, limit, offset) as { id: number; bytes: number }[];

describe('listFlows', () => {
  it('equals a plain sort of the view for narrow, wide, cross-partition and active windows', () => {
    const cases: [number, number, number | null, number, number][] = [
      [T0 + 1000, T0 + 60_000, T0 + 1000, 0, 50], // narrow, in the dated partition
      [T0, T0 + ROWS * 100, T0, 0, 1000], // wide: everything
      [T0 + 5_000_000, T0 + 7_000_000, T0 + 5_000_000, 30, 100], // across the rotation
      [T0 + (ROWS - 600) * 100, 8e15, null, 0, 1000], // active: the newest minute
      [T0 + (ROWS - 600) * 100 + 350, T0 + (ROWS - 20) * 100 - 50, null, 7, 40], // short, cut mid-second
      [T0 + (ROWS / 2 - 300) * 100 + 250, T0 + (ROWS / 2 + 300) * 100 + 450, null, 0, 500], // short, across the rotation
    ];
    for (const [endFrom, endTo, startFrom, offset, limit] of cases) {
      const got = listFlows(db, table, { endFrom, endTo, startFrom, where: all, offset, limit });
      expect(got.rows.map((r) => [r.id, r.bytes])).toEqual(
        plain(endFrom, endTo, startFrom, offset, limit).map((r) => [r.id, r.bytes]),
      );
    }
  });

  it('reads a short window without a start bound by seconds on the slot index, filters included', () => {
    const endFrom = T0 + (ROWS - 600) * 100 + 350;
    const endTo = T0 + (ROWS - 1) * 100;
    const where = { sql: 'src_port % 3 = ?', params: [1] };
    const got = listFlows(db, table, {
      endFrom,
      endTo,
      startFrom: null,
      where,
      offset: 5,
      limit: 30,
    });
    const expected = db
      .prepare(
        'SELECT id, bytes FROM flows WHERE end_time >= ? AND end_time <= ? AND src_port % 3 = 1 ORDER BY bytes DESC, id DESC LIMIT 30 OFFSET 5',
      )
      .all(endFrom, endTo) as { id: number; bytes: number }[];
    expect(expected).toHaveLength(30);
    expect(got.rows.map((r) => [r.id, r.bytes])).toEqual(expected.map((r) => [r.id, r.bytes]));
    expect(got.total).toBe(
      db
        .prepare(
          'SELECT count(*) FROM flows WHERE end_time >= ? AND end_time <= ? AND src_port % 3 = 1',
        )
        .pluck()
        .get(endFrom, endTo),
    );
  });

  it('caps the total at 10,000 and says so', () => {
    const wide = listFlows(db, table, {
      endFrom: T0,
      endTo: T0 + ROWS * 100,
      startFrom: T0,
      where: all,
      offset: 0,
      limit: 10,
    });
    expect(wide).toMatchObject({ total: 10_000, totalCapped: true });
    const narrow = listFlows(db, table, {
      endFrom: T0 + 1000,
      endTo: T0 + 10_900,
      startFrom: null,
      where: all,
      offset: 0,
      limit: 10,
    });
    expect(narrow).toMatchObject({ total: 100, totalCapped: false });
  });

  it('reads a narrow window on the end_time index, a wide one on the bytes index, and a wide one with many rows outside it on the end_time index', () => {
    const seen: string[] = [];
    const spy = new Proxy(db, {
      get(target, prop) {
        if (prop === 'prepare')
          return (sql: string) => {
            seen.push(sql);
            return target.prepare(sql);
          };
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function'
          ? (value as (...a: unknown[]) => unknown).bind(target)
          : value;
      },
    });
    const plans = (
      request: Parameters<typeof listFlows>[2],
      bounds?: Parameters<typeof listFlows>[3],
    ) => {
      seen.length = 0;
      listFlows(spy, table, request, bounds);
      return seen
        .filter((sql) => sql.includes('ORDER BY bytes DESC'))
        .map((sql) =>
          (
            db
              .prepare(`EXPLAIN QUERY PLAN ${sql}`)
              .all(...Array(sql.split('?').length - 1).fill(1)) as { detail: string }[]
          )
            .map((r) => r.detail)
            .join(' | '),
        );
    };
    expect(ROWS / 2).toBeGreaterThan(WIDE_ROWS);
    const narrow = plans({
      endFrom: T0 + 1000,
      endTo: T0 + 60_000,
      startFrom: T0,
      where: all,
      offset: 0,
      limit: 10,
    });
    expect(narrow.length).toBeGreaterThan(0);
    for (const p of narrow) expect(p).toMatch(/USING INDEX \S*by_end/);
    const wide = plans({
      endFrom: T0,
      endTo: T0 + ROWS * 100,
      startFrom: T0,
      where: all,
      offset: 0,
      limit: 10,
    });
    expect(wide).toHaveLength(2);
    for (const p of wide) {
      expect(p).toMatch(/USING INDEX \S*by_bytes/);
      expect(p).not.toMatch(/TEMP B-TREE/);
    }
    // Many rows in the window but more outside it than the walk may visit (small active flows
    // among many larger old ones): the end_time range with a top-N sort, never the bytes walk.
    const mostlyOutside = plans(
      { endFrom: T0, endTo: T0 + 5_000 * 100, startFrom: T0, where: all, offset: 0, limit: 10 },
      { wideRows: 1_000, outsideRows: 1_000 },
    );
    expect(mostlyOutside.length).toBeGreaterThan(0);
    for (const p of mostlyOutside) expect(p).toMatch(/USING INDEX \S*by_end/);
    // The active list: every second of the last minute on the slot index, already in bytes
    // order (no sort), index only where the second lies wholly inside the window.
    const active = plans({
      endFrom: T0 + (ROWS - 600) * 100 + 350,
      endTo: T0 + ROWS * 100,
      startFrom: null,
      where: all,
      offset: 0,
      limit: 10,
    });
    expect(active).toHaveLength(2);
    for (const p of active) {
      expect(p).toMatch(/USING (COVERING )?INDEX \S*by_slot/);
      expect(p).not.toMatch(/TEMP B-TREE/);
    }
    expect(active.some((p) => /USING COVERING INDEX \S*by_slot/.test(p))).toBe(true);
  });

  it('keeps ties at the page boundary when seconds are read down to the page floor', () => {
    const tdir = fs.mkdtempSync(path.join(os.tmpdir(), 'flows-ties-'));
    const tdb = openDatabase(path.join(tdir, 'db.sqlite'));
    try {
      migrate(tdb, T0);
      const ties = definePartitionedTable(tdb, {
        name: 'flows',
        timeColumn: 'end_time',
        maintenance: {
          listed: false,
          rotationCron: FLOW_ROTATION,
          retentionDays: FLOW_RETENTION_DAYS,
        },
      });
      const insert = tdb.prepare(
        `INSERT INTO flows_latest (${FLOW_COLUMNS}) VALUES (?, ?, '10.0.0.1', ?, '10.0.0.2', 443, 6, ?, 1, '127.0.0.1', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?)`,
      );
      // 20 flows a second for 50 s, bytes from seven values: every page boundary is a tie.
      tdb.transaction(() => {
        for (let i = 0; i < 1000; i++)
          insert.run(T0 + i * 50 - 10, T0 + i * 50, i, (i * 31) % 7, T0);
      })();
      for (const [offset, limit] of [
        [0, 35],
        [10, 100],
        [0, 143],
      ] as const) {
        const got = listFlows(tdb, ties, {
          endFrom: T0,
          endTo: T0 + 50_000,
          startFrom: null,
          where: all,
          offset,
          limit,
        });
        const expected = tdb
          .prepare(
            'SELECT id, bytes FROM flows WHERE end_time >= ? AND end_time <= ? ORDER BY bytes DESC, id DESC LIMIT ? OFFSET ?',
          )
          .all(T0, T0 + 50_000, limit, offset) as { id: number; bytes: number }[];
        expect(got.rows.map((r) => [r.id, r.bytes])).toEqual(expected.map((r) => [r.id, r.bytes]));
      }
    } finally {
      tdb.close();
      fs.rmSync(tdir, { recursive: true, force: true });
    }
  });

  it('reads a partition without the slot index as before', () => {
    const [dated] = table.located().filter((ref) => ref.name !== 'flows_latest');
    const slot = db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name LIKE '%by_slot'",
      )
      .get(dated!.name) as { name: string; sql: string };
    db.exec(`DROP INDEX "${slot.name}"`);
    try {
      const endFrom = T0 + (ROWS / 2 - 300) * 100;
      const endTo = T0 + (ROWS / 2 - 1) * 100;
      const got = listFlows(db, table, {
        endFrom,
        endTo,
        startFrom: null,
        where: all,
        offset: 0,
        limit: 50,
      });
      expect(got.rows.map((r) => [r.id, r.bytes])).toEqual(
        plain(endFrom, endTo, null, 0, 50).map((r) => [r.id, r.bytes]),
      );
    } finally {
      db.exec(slot.sql);
    }
  });
});

describe('conversation rollup upsert', () => {
  it('sums counters, keeps times as min/max and src_ports distinct and capped at 64', () => {
    const upsert = db.prepare(FLOW_STATEMENTS['flows.rollup'] as string);
    const key = [T0, '10.0.0.1', '10.0.0.2', 443, 6, '127.0.0.1', 0, 0, 0];
    const enrichment = [null, null, null, null, null, null];
    for (let batch = 0; batch < 10; batch++) {
      const ports = Array.from({ length: 12 }, (_, i) => 1000 + batch * 10 + i); // overlapping
      upsert.run(
        ...key,
        JSON.stringify(ports),
        100,
        2,
        3,
        T0 + batch,
        T0 + 100 + batch,
        ...enrichment,
      );
    }
    const row = db.prepare('SELECT * FROM flow_conversations').get() as Record<string, unknown>;
    const ports = JSON.parse(row.src_ports as string) as number[];
    expect(ports).toHaveLength(64);
    expect(new Set(ports).size).toBe(64);
    expect(row).toMatchObject({
      bytes: 1000,
      packets: 20,
      flows: 30,
      start_time: T0,
      end_time: T0 + 109,
    });
  });
});

describe('multi-row conversation upsert', () => {
  it('merges rows of one statement that share a key, and rows already stored', () => {
    db.exec('DELETE FROM flow_conversations');
    const many = db.prepare(FLOW_STATEMENTS['flows.rollup-many'] as string);
    const row = (src: string, port: number) => [
      T0,
      src,
      '10.0.0.2',
      443,
      6,
      '127.0.0.1',
      0,
      0,
      0,
      JSON.stringify([port]),
      10,
      1,
      1,
      T0,
      T0,
      null,
      null,
      null,
      null,
      null,
      null,
    ];
    const rows = Array.from({ length: ROLLUP_ROWS_PER_UPSERT }, (_, i) =>
      row(`10.0.0.${i % 4}`, i),
    );
    many.run(...rows.flat());
    many.run(...rows.flat());
    const stored = db
      .prepare('SELECT src_ip, flows, bytes, src_ports FROM flow_conversations ORDER BY src_ip')
      .all() as { src_ip: string; flows: number; bytes: number; src_ports: string }[];
    expect(stored.map((r) => [r.src_ip, r.flows, r.bytes])).toEqual(
      ['10.0.0.0', '10.0.0.1', '10.0.0.2', '10.0.0.3'].map((ip) => [ip, 8, 80]),
    );
    expect(JSON.parse(stored[0]!.src_ports)).toEqual([0, 4, 8, 12]);
  });
});

describe('partition registry', () => {
  it('flows rotates hourly for maintenance and is not one of the listed spec tables', () => {
    expect(listedPartitionedTables(db).map((t) => t.name)).not.toContain('flows');
    const flows = maintainedPartitionedTables(db).find((t) => t.name === 'flows');
    expect(flows?.settings()).toMatchObject({ cronSchedule: '0 * * * *', retentionDays: 7 });
  });
});
