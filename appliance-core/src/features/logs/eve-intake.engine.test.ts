/**
 * The eve.json follower against a real database (migrations applied) and the real storage
 * writer: a missing file, partial and over-long lines, rename-and-reopen rotation (also while
 * stopped), truncation, restarts, two followers on one file, enrichment and the minute rollup.
 * Every test ends by checking exactly-once: the stored rows are the file's alert lines, each once,
 * in file order, and the stored position is where they end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { StorageWriter, type StorageWriterProducer } from '../../platform/db/storage-writer.js';
import { EveIntakeEngine, eveIntakeCounters, type EveIntakeOptions } from './eve-intake.engine.js';
import { storedEvePosition } from './eve-intake.repository.js';
import { registerEveWrites } from './eve-intake.writes.js';
import { alertLine, SURICATA_ALERT_VLAN, SURICATA_FLOW } from './testing/eve-lines.js';

let dir: string;
let file: string;
let db: DB;
let writer: StorageWriter;
const engines: EveIntakeEngine[] = [];
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eve-intake-'));
  file = path.join(dir, 'eve.json');
  db = openDatabase(path.join(dir, 'appliance.db'));
  migrate(db, Date.now());
  writer = new StorageWriter(db, { flushMs: 5 });
  registerEveWrites(writer);
  writer.start();
});

afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.stop();
  await writer.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function engine(options: Partial<EveIntakeOptions> = {}): EveIntakeEngine {
  const e = new EveIntakeEngine({
    file,
    db,
    writer: writer.producer('ids', { flushMs: 5 }),
    devices: { byIp: () => undefined },
    log: quiet,
    clock: { now: () => Date.now() },
    pollMs: 10,
    retryMs: 20,
    ...options,
  });
  engines.push(e);
  return e;
}

/** An alert line numbered `n` (its signature says which), at minute `minute` of the test hour. */
const alert = (n: number, extra: Record<string, unknown> = {}, minute = 0) =>
  alertLine(
    {
      timestamp: `2026-11-26T10:${String(minute).padStart(2, '0')}:00.000000+0000`,
      flow_id: n,
      ...extra,
    },
    { signature: `line ${n}` },
  );
const lines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => alert(from + i) + '\n').join('');

const stored = () =>
  (
    db.prepare('SELECT signature FROM eve_log_latest ORDER BY id').all() as { signature: string }[]
  ).map((r) => r.signature);
const expected = (...ns: number[]) => ns.map((n) => `line ${n}`);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 150));

describe('following eve.json', () => {
  it('waits for a missing file, then stores its alerts and ignores other events', async () => {
    const e = engine();
    await e.start();
    await settle();
    expect(e.counters().received).toBe(0);
    fs.writeFileSync(file, lines(0, 3) + SURICATA_FLOW + '\n' + 'garbage\n');
    await until(() => e.counters().received === 5, '5 lines');
    expect(stored()).toEqual(expected(0, 1, 2));
    expect(e.counters()).toMatchObject({ received: 5, stored: 3, ignored: 1, dropped: 1 });
    expect(e.counters().droppedBy['not-json']).toBe(1);
    expect(storedEvePosition(db, file)?.offset).toBe(fs.statSync(file).size);
  });

  it('survives an unreadable path (a directory), logging it once, and reads the file that replaces it', async () => {
    fs.mkdirSync(file);
    const errors: string[] = [];
    const log = { ...quiet, error: (_: unknown, msg: string) => void errors.push(msg) };
    const e = engine({ log: log as unknown as EveIntakeOptions['log'] });
    await e.start();
    await settle();
    expect(errors).toEqual(['IDS intake: reading the eve file failed; retrying']);
    fs.rmdirSync(file);
    fs.writeFileSync(file, lines(0, 2));
    await until(() => e.counters().stored === 2, 'two lines');
    expect(stored()).toEqual(expected(0, 1));
  });

  it('holds a partial last line until its newline arrives', async () => {
    fs.writeFileSync(file, lines(0, 1) + alert(1).slice(0, 50));
    const e = engine();
    await e.start();
    await until(() => e.counters().stored === 1, 'the first line');
    await settle();
    expect(stored()).toEqual(expected(0));
    fs.appendFileSync(file, alert(1).slice(50));
    await settle();
    expect(stored()).toEqual(expected(0));
    fs.appendFileSync(file, '\n' + lines(2, 3));
    await until(() => e.counters().stored === 3, 'three lines');
    expect(stored()).toEqual(expected(0, 1, 2));
  });

  it('skips and counts an over-long line, also one written in pieces', async () => {
    const e = engine({ maxLineBytes: 2048, readBytes: 4096 });
    fs.writeFileSync(
      file,
      lines(0, 1) + alert(99, { pad: 'x'.repeat(10_000) }) + '\n' + lines(1, 2),
    );
    await e.start();
    await until(() => e.counters().received === 3, 'three lines');
    expect(stored()).toEqual(expected(0, 1));
    expect(e.counters().droppedBy['too-long']).toBe(1);
    // An over-long line still being written: nothing of it is kept while it grows.
    fs.appendFileSync(file, '{"event_type":"alert","pad":"' + 'y'.repeat(6000));
    await settle();
    fs.appendFileSync(file, 'y'.repeat(6000));
    await settle();
    expect(e.counters().received).toBe(3);
    fs.appendFileSync(file, '"}\n' + lines(2, 3));
    await until(() => e.counters().received === 5, 'five lines');
    expect(stored()).toEqual(expected(0, 1, 2));
    expect(e.counters().droppedBy['too-long']).toBe(2);
    expect(storedEvePosition(db, file)?.offset).toBe(fs.statSync(file).size);
  });

  it('follows rename-and-reopen rotation: finishes the old file, then reads the new one from 0', async () => {
    fs.writeFileSync(file, lines(0, 3));
    const e = engine();
    await e.start();
    await until(() => e.counters().stored === 3, 'three lines');
    // logrotate renames and creates an empty file; Suricata writes the old one until SIGHUP.
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, '');
    fs.appendFileSync(`${file}.1`, lines(3, 5));
    await until(() => e.counters().stored === 5, 'lines written to the renamed file');
    // The new file is still empty: the old one stays followed (Suricata may still write it).
    await settle();
    expect(e.counters().rotations).toBe(0);
    // After SIGHUP: the last lines of the old file, then the new file.
    fs.appendFileSync(`${file}.1`, lines(5, 6));
    fs.appendFileSync(file, lines(6, 9));
    await until(() => e.counters().stored === 9, 'nine lines');
    expect(stored()).toEqual(expected(...range(0, 9)));
    expect(e.counters().rotations).toBe(1);
    const position = storedEvePosition(db, file);
    expect(position?.inode).toBe(BigInt(fs.statSync(file).ino));
    expect(position?.offset).toBe(fs.statSync(file).size);
  });

  it('counts an unterminated last line of a rotated file dropped', async () => {
    fs.writeFileSync(file, lines(0, 1) + alert(1).slice(0, 40));
    const e = engine();
    await e.start();
    await until(() => e.counters().stored === 1, 'one line');
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, lines(2, 3));
    await until(() => e.counters().stored === 2, 'the new file');
    expect(stored()).toEqual(expected(0, 2));
    expect(e.counters().droppedBy.unterminated).toBe(1);
  });

  it('starts over from 0 after truncation', async () => {
    fs.writeFileSync(file, lines(0, 4));
    const e = engine();
    await e.start();
    await until(() => e.counters().stored === 4, 'four lines');
    fs.truncateSync(file, 0);
    await until(() => e.counters().truncations === 1, 'the truncation');
    expect(storedEvePosition(db, file)?.offset).toBe(0);
    fs.appendFileSync(file, lines(4, 6));
    await until(() => e.counters().stored === 6, 'six lines');
    expect(stored()).toEqual(expected(...range(0, 6)));
  });

  it('resumes at the stored position after a restart, also when the file was rotated meanwhile', async () => {
    fs.writeFileSync(file, lines(0, 3));
    const first = engine();
    await first.start();
    await until(() => first.counters().stored === 3, 'three lines');
    await first.stop();
    // While stopped: more lines in the old file, then rotation and a new file.
    fs.appendFileSync(file, lines(3, 5));
    fs.renameSync(file, `${file}-20261126`);
    fs.writeFileSync(file, lines(5, 7));
    const second = engine();
    await second.start();
    await until(() => second.counters().stored === 4, 'the rest');
    expect(stored()).toEqual(expected(...range(0, 7)));
    await second.stop();
    // A restart with nothing new stores nothing.
    const third = engine();
    await third.start();
    await settle();
    expect(third.counters().received).toBe(0);
    expect(stored()).toHaveLength(7);
  });

  it('recognises its file by inode after a restart where the device number changed (reboot)', async () => {
    fs.writeFileSync(file, lines(0, 3));
    const first = engine();
    await first.start();
    await until(() => first.counters().stored === 3, 'three lines');
    await first.stop();
    db.prepare('UPDATE eve_intake_state SET dev = dev + 1').run();
    fs.appendFileSync(file, lines(3, 5));
    const second = engine();
    await second.start();
    await until(() => second.counters().stored === 2, 'the new lines');
    await settle();
    expect(stored()).toEqual(expected(...range(0, 5)));
    expect(storedEvePosition(db, file)?.dev).toBe(BigInt(fs.statSync(file).dev));
  });

  it('starts over when the stored position is not the start of a line (file replaced in place)', async () => {
    fs.writeFileSync(file, lines(0, 2));
    const first = engine();
    await first.start();
    await until(() => first.counters().stored === 2, 'two lines');
    await first.stop();
    const offset = storedEvePosition(db, file)?.offset as number;
    // Same inode, new content longer than the old position, the old position mid-line.
    const replacement = alert(10, { pad: 'z'.repeat(offset) }) + '\n';
    fs.writeFileSync(file, replacement);
    const second = engine();
    await second.start();
    await until(() => second.counters().stored === 1, 'the replacement');
    expect(stored()).toEqual(expected(0, 1, 10));
  });

  it('two followers of one file into one database store each line once (compare-and-set)', async () => {
    fs.writeFileSync(file, lines(0, 400));
    const a = engine({ readBytes: 8192, maxLineBytes: 4096 });
    const b = engine({ readBytes: 8192, maxLineBytes: 4096 });
    await Promise.all([a.start(), b.start()]);
    await until(() => stored().length >= 400, '400 rows', 30_000);
    await settle();
    expect(stored()).toEqual(expected(...range(0, 400)));
    expect(a.counters().stored + b.counters().stored).toBe(400);
    expect(a.counters().retries + b.counters().retries).toBeGreaterThan(0);
  });

  it('settles groups lost with the writer by the stored position: committed ones are not redone, others are', async () => {
    fs.writeFileSync(file, lines(0, 300));
    const real = writer.producer('ids', { flushMs: 5 });
    let calls = 0;
    // Every third group: lost before it reached the database; every third+1: committed, then
    // reported lost (the instant between COMMIT and the notice when the worker dies).
    const flaky: StorageWriterProducer = {
      ...real,
      name: real.name,
      write: (statement, params) => real.write(statement, params),
      flush: () => real.flush(),
      onCommit: (listener) => real.onCommit(listener),
      stats: () => real.stats(),
      group: async (ops) => {
        const n = calls++;
        if (n % 3 === 0) return { committed: false, error: 'lost: worker exited (test)' };
        const result = await real.group(ops);
        return n % 3 === 1 ? { committed: false, error: 'lost: worker exited (test)' } : result;
      },
    };
    const e = engine({ writer: flaky, readBytes: 8192, maxLineBytes: 4096 });
    await e.start();
    await until(() => e.counters().stored === 300, '300 rows', 15_000);
    await settle();
    expect(stored()).toEqual(expected(...range(0, 300)));
    expect(e.counters()).toMatchObject({ received: 300, stored: 300 });
    expect(e.counters().retries).toBeGreaterThan(0);
  });

  it('enriches endpoints from the device map and keeps the minute rollup by device and severity', async () => {
    const devices = new Map([['127.0.0.1', { id: 1, label: 'appliance', profile: 'linux' }]]);
    const e = engine({ devices: { byIp: (ip) => devices.get(ip) } });
    fs.writeFileSync(
      file,
      [
        alert(0, {}, 0),
        alert(1, {}, 0),
        alert(2, { src_ip: '10.9.9.9' }, 0),
        alert(3, {}, 1),
        SURICATA_ALERT_VLAN.replace('"src_ip":"127.0.0.3"', '"src_ip":"127.0.0.1"'),
      ].join('\n') + '\n',
    );
    await e.start();
    await until(() => e.counters().stored === 5, 'five lines');
    const row = db.prepare('SELECT * FROM eve_log_latest WHERE id = 1').get();
    expect(row).toMatchObject({
      src_ip: '127.0.0.1',
      src_id: 1,
      src_host: 'appliance',
      src_profile: 'linux',
      dst_ip: '127.0.0.2',
      dst_id: null,
      dst_host: null,
      severity: 1,
      signature_id: 1000001,
      category: 'Misc activity',
      proto: 'TCP',
      src_port: 40000,
      dst_port: 8080,
      flow_id: 0,
      timestamp: Date.UTC(2026, 10, 26, 10, 0),
    });
    expect(
      db.prepare('SELECT raw, vlan, severity FROM eve_log_latest WHERE id = 5').get(),
    ).toMatchObject({ vlan: 42, severity: 3, raw: expect.stringContaining('"severity":4') });
    const minute = Date.UTC(2026, 10, 26, 10, 0);
    expect(
      db.prepare('SELECT * FROM eve_minute_rollup ORDER BY minute, src_id, severity').all(),
    ).toEqual([
      { minute, src_id: 0, dst_id: 0, severity: 1, count: 1 },
      { minute, src_id: 1, dst_id: 0, severity: 1, count: 2 },
      { minute, src_id: 1, dst_id: 0, severity: 3, count: 1 },
      { minute: minute + 60_000, src_id: 1, dst_id: 0, severity: 1, count: 1 },
    ]);
    // The rollup matches the rows, whatever chunking did.
    const byRows = db
      .prepare(
        'SELECT (timestamp / 60000) * 60000 AS minute, coalesce(src_id, 0) AS src_id, coalesce(dst_id, 0) AS dst_id, severity, count(*) AS count FROM eve_log_latest GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 4',
      )
      .all();
    expect(
      db.prepare('SELECT * FROM eve_minute_rollup ORDER BY minute, src_id, severity').all(),
    ).toEqual(byRows);
  });

  it('reports zero counters when IDS intake is off', () => {
    expect(eveIntakeCounters(null)).toMatchObject({ enabled: false, received: 0, stored: 0 });
  });
});
