/**
 * The data-maintenance partition, tablespace and cron endpoints over HTTP (spec part 3, "Data
 * maintenance"), against a real appliance with a configured tablespace directory: every status
 * and message, the `system` gate, short and long argument names (the long form wins), rotation
 * deleting no row, and a move whose data (written by the storage writer's worker) stays readable
 * through the API. A second appliance without tablespaces answers the synthetic default entry.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageWriter } from '../../platform/db/storage-writer.js';
import { DAY_MS } from '../../platform/time/time.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

const DENIED = {
  status: false,
  hasError: true,
  message: 'You do not have permission to perform this action.',
};
const failed = (message: string) => ({ status: false, hasError: true, message });
const INVALID_TABLE = failed('Invalid table name');

let h: Harness;
let admin: string;
let system: string;
let other: string;
let spaceDir: string;

const count = (sql: string, ...params: unknown[]) =>
  (h.appliance.db.prepare(sql).get(...params) as { n: number }).n;
const insertWalks = (deviceId: number, n: number, at: number) => {
  const statement = h.appliance.db.prepare(
    `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (?, ?, 'crawl', 0, 1, '[]')`,
  );
  for (let i = 0; i < n; i++) statement.run(deviceId, at + i);
};
const post = (url: string, body: unknown, token = system) =>
  h.request('POST', url, { token, body });

beforeAll(async () => {
  spaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablespace-archive-'));
  h = await startAppliance({ APPLIANCE_TABLESPACES: `archive=${spaceDir}` });
  admin = await h.login();
  system = (await h.userWith(['system'])).token;
  other = (await h.userWith(['devices', 'logs', 'write_devices'])).token;
});
afterAll(async () => {
  await h.close();
  fs.rmSync(spaceDir, { recursive: true, force: true });
});

describe('the system gate', () => {
  it('denies every partition endpoint to a caller without system (401, legacy body), allows sa and system', async () => {
    const routes: [string, string, unknown][] = [
      ['GET', '/api/getPartitionedTables', undefined],
      ['POST', '/api/getTablePartitions', { table: 'walks_log' }],
      ['POST', '/api/rotatePartition', { table: 'walks_log' }],
      ['POST', '/api/deleteOldPartitions', { table: 'walks_log', weeks: 1 }],
      ['POST', '/api/deletePartition', { partition: 'walks_log_p20200101' }],
      ['GET', '/api/getAvailableTablespaces', undefined],
      ['POST', '/api/getTableTablespace', { table: 'walks_log' }],
      ['POST', '/api/moveTableToTablespace', { table: 'walks_log', tablespace: 'archive' }],
      ['POST', '/api/getTableCronSchedule', { table: 'walks_log' }],
      ['POST', '/api/updateTableCronSchedule', { table: 'walks_log', schedule: '0 1 * * *' }],
    ];
    const before = h.appliance.db.prepare('SELECT * FROM partitioned_tables ORDER BY id').all();
    for (const [method, url, body] of routes) {
      const res = await h.request(method, url, { token: other, body });
      expect(res.status, url).toBe(401);
      expect(res.body, url).toEqual(DENIED);
    }
    // Denied requests changed nothing.
    expect(h.appliance.db.prepare('SELECT * FROM partitioned_tables ORDER BY id').all()).toEqual(
      before,
    );
    const listed = await h.request('GET', '/api/getPartitionedTables', { token: admin });
    expect(listed.status).toBe(200);
  });
});

describe('GET /api/getPartitionedTables', () => {
  it("lists exactly the spec's tables, in the spec's order", async () => {
    const res = await h.request('GET', '/api/getPartitionedTables', { token: system });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 200,
      hasError: false,
      message: ['syslog_log', 'eventlog_log', 'eve_log', 'walks_log'],
    });
  });
});

describe('POST /api/getTablePartitions', () => {
  it('answers 422 Validation failed with errors for a missing or unknown table', async () => {
    const missing = await post('/api/getTablePartitions', {});
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({
      status: false,
      hasError: true,
      message: 'Validation failed',
      errors: { table: ['The table field is required.'] },
    });
    for (const table of ['users', 'walks_log_latest', "walks_log'; DROP TABLE users;--", 7]) {
      const res = await post('/api/getTablePartitions', { table });
      expect(res.status, String(table)).toBe(422);
      expect(res.body).toEqual({
        status: false,
        hasError: true,
        message: 'Validation failed',
        errors: { table: ['The selected table is invalid.'] },
      });
    }
    expect(count(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'users'`)).toBe(1);
  });

  it('lists partitions newest first with bounds; the long form wins', async () => {
    const res = await post('/api/getTablePartitions', { table: 'bogus', tableName: 'eve_log' });
    expect(res.status).toBe(200);
    expect(res.body.message).toEqual([
      {
        name: 'eve_log_latest',
        table: 'eve_log',
        is_latest: true,
        tablespace: 'default',
        rows: 0,
        rows_exact: false,
        first_time: null,
        last_time: null,
        size: expect.any(Number),
        rotated_on: null,
      },
    ]);
    const loses = await post('/api/getTablePartitions', { table: 'eve_log', tableName: 'bogus' });
    expect(loses.status).toBe(422);
  });
});

describe('rotation and deletion', () => {
  const deviceId = 1;

  it('POST /api/rotatePartition rolls the live partition and deletes no row; 400 Invalid table name', async () => {
    const now = h.appliance.ctx.clock.now();
    insertWalks(deviceId, 30, now - 20 * DAY_MS);
    const rowsBefore = count('SELECT count(*) AS n FROM walks_log');
    const res = await post('/api/rotatePartition', { tableName: 'walks_log' });
    expect(res.status).toBe(200);
    const today = new Date(now).toISOString().slice(0, 10).replace(/-/g, '');
    expect(res.body).toEqual({
      status: 200,
      hasError: false,
      message: `Partition walks_log_latest rotated to walks_log_p${today}`,
      partition: `walks_log_p${today}`,
    });
    expect(count('SELECT count(*) AS n FROM walks_log')).toBe(rowsBefore);
    expect(count('SELECT count(*) AS n FROM walks_log_latest')).toBe(0);
    const listed = await post('/api/getTablePartitions', { table: 'walks_log' });
    expect(listed.body.message[1]).toMatchObject({
      name: `walks_log_p${today}`,
      rows: rowsBefore,
      rows_exact: true,
      rotated_on: new Date(now).toISOString().slice(0, 10),
    });
    // Nothing to roll: no empty partition is made.
    const empty = await post('/api/rotatePartition', { table: 'walks_log' });
    expect(empty.body).toEqual({
      status: 200,
      hasError: false,
      message: 'Nothing to rotate: walks_log_latest is empty',
      partition: null,
    });
    for (const body of [
      {},
      { table: 'users' },
      { table: 'walks_log', tableName: 'x' },
      { table: ['walks_log'] },
    ]) {
      const bad = await post('/api/rotatePartition', body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toEqual(INVALID_TABLE);
    }
    expect(count('SELECT count(*) AS n FROM walks_log')).toBe(rowsBefore);
  });

  it('POST /api/deleteOldPartitions drops partitions older than weeks, with details; 422 for weeks, 400 for the table', async () => {
    for (const weeks of [0, -1, 1.5, 'x', null]) {
      const res = await post('/api/deleteOldPartitions', { table: 'walks_log', weeks });
      expect(res.status, String(weeks)).toBe(422);
      expect(res.body).toEqual({
        status: false,
        hasError: true,
        message: 'Validation failed',
        errors: { weeks: ['The weeks field must be an integer of at least 1.'] },
      });
    }
    const badTable = await post('/api/deleteOldPartitions', { table: 'audit_log', weeks: 1 });
    expect(badTable.status).toBe(400);
    expect(badTable.body).toEqual(INVALID_TABLE);

    const now = h.appliance.ctx.clock.now();
    const keep = await post('/api/deleteOldPartitions', { table: 'walks_log', weeks: 4 });
    expect(keep.status).toBe(200);
    expect(keep.body).toEqual({
      status: 200,
      hasError: false,
      message: '0 partitions deleted',
      details: { deleted_count: 0, retention_date: expect.any(String) },
    });
    const retention = Date.parse(keep.body.details.retention_date);
    expect(Math.abs(retention - (now - 28 * DAY_MS))).toBeLessThan(60_000);
    const rows = count('SELECT count(*) AS n FROM walks_log');
    const drop = await post('/api/deleteOldPartitions', { tableName: 'walks_log', weeks: '2' });
    expect(drop.body).toMatchObject({
      message: '1 partition deleted',
      details: { deleted_count: 1 },
    });
    expect(count('SELECT count(*) AS n FROM walks_log')).toBe(rows - 30);
  });

  it('POST /api/deletePartition drops one dated partition; 400 Invalid partition name otherwise', async () => {
    insertWalks(deviceId, 5, h.appliance.ctx.clock.now() - DAY_MS);
    const rotated = (await post('/api/rotatePartition', { table: 'walks_log' })).body.partition;
    for (const body of [
      {},
      { partition: 'walks_log_latest' },
      { partition: 'users' },
      { partition: `${rotated}; DROP TABLE users` },
      { partition: 'walks_log_p20000101' },
      { partition: rotated, partitionName: 'eve_log_latest' },
    ]) {
      const res = await post('/api/deletePartition', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual(failed('Invalid partition name'));
    }
    expect(count(`SELECT count(*) AS n FROM sqlite_master WHERE name = ?`, rotated)).toBe(1);
    const ok = await post('/api/deletePartition', { partition: 'x', partitionName: rotated });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      status: 200,
      hasError: false,
      message: `Partition ${rotated} deleted`,
    });
    expect(count(`SELECT count(*) AS n FROM sqlite_master WHERE name = ?`, rotated)).toBe(0);
    expect(
      count('SELECT count(*) AS n FROM partition_bounds WHERE partition_name = ?', rotated),
    ).toBe(0);
  });
});

describe('tablespaces', () => {
  it('GET /api/getAvailableTablespaces lists the configured ones', async () => {
    const res = await h.request('GET', '/api/getAvailableTablespaces', { token: system });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 200,
      hasError: false,
      message: [{ name: 'archive', location: spaceDir, size: expect.any(Number) }],
    });
  });

  it('moves walks_log written by the storage writer to the tablespace; the API still reads it', async () => {
    const now = h.appliance.ctx.clock.now();
    // The writer's worker, built like the appliance's own from the API connection.
    const writer = new StorageWriter(h.appliance.db, { flushMs: 5 });
    writer.define(
      'test.walk',
      `INSERT INTO walks_log_latest (device_id, timestamp, kind, oid_count, duration_ms, walk) VALUES (?, ?, 'live', 1, 1, ?)`,
    );
    writer.start();
    try {
      writer.write('test.walk', [
        1,
        now - 2 * DAY_MS,
        '[{"oid":"1.3.6.1.2.1.1.5.0","type":"OctetString","value":"moved"}]',
      ]);
      await writer.flush();
    } finally {
      await writer.close();
    }
    const rotated = (await post('/api/rotatePartition', { table: 'walks_log' })).body.partition;
    expect(rotated).toMatch(/^walks_log_p\d{8}/);

    for (const body of [
      { table: 'walks_log', tablespace: 'nowhere' },
      { table: 'walks_log', tablespace: '../../etc' },
      { table: 'users', tablespace: 'archive' },
      { table: 'walks_log', tablespace: 'archive', tablespaceName: 'nowhere' },
      { table: 'walks_log' },
    ]) {
      const res = await post('/api/moveTableToTablespace', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual(failed('Invalid table name or tablespace name'));
    }
    expect(fs.readdirSync(spaceDir).some((f) => f.includes('..'))).toBe(false);
    const badFlag = await post('/api/moveTableToTablespace', {
      table: 'walks_log',
      tablespace: 'archive',
      includeIndexes: 'sometimes',
    });
    expect(badFlag.status).toBe(422);
    expect(badFlag.body).toEqual({
      status: false,
      hasError: true,
      message: 'Validation failed',
      errors: { includeIndexes: ['The includeIndexes field must be true or false.'] },
    });
    expect((await post('/api/getTableTablespace', { table: 'walks_log' })).body.message).toBe(
      'default',
    );

    const res = await post('/api/moveTableToTablespace', {
      tableName: 'walks_log',
      tablespaceName: 'archive',
      includeIndexes: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 200,
      hasError: false,
      message: 'Table walks_log moved to tablespace archive',
      moved: [rotated],
    });
    const tablespace = await post('/api/getTableTablespace', { table: 'walks_log' });
    expect(tablespace.body).toEqual({ status: 200, hasError: false, message: 'archive' });
    expect((await post('/api/getTableTablespace', { table: 'eve_log' })).body.message).toBe(
      'default',
    );
    expect((await post('/api/getTableTablespace', { table: 'nope' })).body).toEqual(INVALID_TABLE);
    // The partition's table (and its indexes: includeIndexes=false has no effect) is in the other file.
    expect(
      count(`SELECT count(*) AS n FROM ts_archive.sqlite_master WHERE tbl_name = ?`, rotated),
    ).toBe(3);
    expect(count(`SELECT count(*) AS n FROM main.sqlite_master WHERE name = ?`, rotated)).toBe(0);
    const listed = await post('/api/getTablePartitions', { table: 'walks_log' });
    expect(listed.body.message.find((p: { name: string }) => p.name === rotated)).toMatchObject({
      tablespace: 'archive',
      rows: 1,
    });
    // Read through the API: the device's newest walk lives in the tablespace now.
    const walk = await h.request('GET', '/api/getLastWalk/1', { token: admin });
    expect(walk.status).toBe(200);
    expect(JSON.stringify(walk.body)).toContain('moved');
    const space = await h.request('GET', '/api/getAvailableTablespaces', { token: system });
    expect(space.body.message[0].size).toBeGreaterThan(4096);
    // A later rotation follows the table to its tablespace.
    insertWalks(1, 3, now);
    const next = (await post('/api/rotatePartition', { table: 'walks_log' })).body.partition;
    expect(count(`SELECT count(*) AS n FROM ts_archive.sqlite_master WHERE name = ?`, next)).toBe(
      1,
    );
    // And back to the main file.
    const home = await post('/api/moveTableToTablespace', {
      table: 'walks_log',
      tablespace: 'default',
    });
    expect(home.body.moved.sort()).toEqual([rotated, next].sort());
    expect((await post('/api/getTableTablespace', { table: 'walks_log' })).body.message).toBe(
      'default',
    );
    expect(count(`SELECT count(*) AS n FROM walks_log WHERE walk LIKE '%moved%'`)).toBe(1);
  });
});

describe('cron schedules', () => {
  it('POST /api/getTableCronSchedule answers the default schedules with their job ids', async () => {
    const walks = await post('/api/getTableCronSchedule', { table: 'walks_log' });
    expect(walks.status).toBe(200);
    expect(walks.body).toEqual({
      status: 200,
      hasError: false,
      message: { schedule: '0 0 * * 1', jobid: expect.any(Number) },
    });
    const eve = await post('/api/getTableCronSchedule', { table: 'eve_log' });
    expect(eve.body.message).toEqual({ schedule: '0 0 * * *', jobid: expect.any(Number) });
    expect(eve.body.message.jobid).not.toBe(walks.body.message.jobid);
    expect((await post('/api/getTableCronSchedule', {})).body).toEqual(INVALID_TABLE);
  });

  it('POST /api/updateTableCronSchedule stores a five-field cron; 400 Invalid cron schedule format otherwise', async () => {
    const before = await post('/api/getTableCronSchedule', { table: 'eve_log' });
    for (const schedule of ['* * * *', '* * * * * *', '@daily', '61 * * * *', '', 5, 'x y z a b']) {
      const res = await post('/api/updateTableCronSchedule', { table: 'eve_log', schedule });
      expect(res.status, String(schedule)).toBe(400);
      expect(res.body).toEqual(failed('Invalid cron schedule format'));
    }
    const badTable = await post('/api/updateTableCronSchedule', {
      table: 'x',
      schedule: '0 1 * * *',
    });
    expect(badTable.body).toEqual(INVALID_TABLE);
    const ok = await post('/api/updateTableCronSchedule', {
      table: 'eve_log',
      schedule: '0 5 * * *',
      cronSchedule: '30  2 * * *',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      status: 200,
      hasError: false,
      message: 'Cron schedule updated',
      jobid: before.body.message.jobid,
    });
    const after = await post('/api/getTableCronSchedule', { tableName: 'eve_log' });
    expect(after.body.message).toEqual({
      schedule: '30 2 * * *',
      jobid: before.body.message.jobid,
    });
    const audit = h.appliance.db
      .prepare(
        `SELECT action, detail FROM audit_log WHERE action = 'partition.schedule' ORDER BY id DESC`,
      )
      .get() as { action: string; detail: string };
    expect(JSON.parse(audit.detail)).toEqual({ schedule: '30 2 * * *' });
  });
});

describe('an appliance without tablespaces', () => {
  it('answers the synthetic default entry', async () => {
    const bare = await startAppliance();
    try {
      const token = await bare.login();
      const res = await bare.request('GET', '/api/getAvailableTablespaces', { token });
      expect(res.body).toEqual({
        status: 200,
        hasError: false,
        message: [
          {
            name: 'default',
            location: path.join(bare.dataDir, 'appliance.db'),
            size: expect.any(Number),
          },
        ],
      });
      expect(res.body.message[0].size).toBeGreaterThan(0);
      const move = await bare.request('POST', '/api/moveTableToTablespace', {
        token,
        body: { table: 'walks_log', tablespace: 'archive' },
      });
      expect(move.status).toBe(400);
    } finally {
      await bare.close();
    }
  });
});
