/**
 * Exactly once across kill -9: the appliance process (`appliance-core/dist/server.js`, as `npm
 * start` runs it) follows a large eve.json and is killed with SIGKILL while it reads, several
 * times, with lines appended and the file rotated while it is down. After every kill the database
 * holds exactly the alerts of the file up to the stored position (no more, no fewer, each once, in
 * order); after the last start it holds every alert of every file once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../platform/db/database.js';
import { buildCore } from '../../../../test/harness/build-core.js';
import { startServer, stopServer, type Started } from '../../../../test/harness/process.js';
import { alertLine, SURICATA_FLOW } from './testing/eve-lines.js';

let dir: string;
let server: Started | null = null;

beforeAll(() => {
  buildCore();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eve-kill-'));
}, 180_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Lines `from`..`to`: alerts signed `line n`, with a flow event after every third and a broken line every 1000th. */
function block(from: number, to: number): { text: string; alerts: string[] } {
  const out: string[] = [];
  const alerts: string[] = [];
  for (let n = from; n < to; n++) {
    out.push(
      alertLine(
        {
          flow_id: n,
          timestamp: `2026-11-26T10:${String(n % 60).padStart(2, '0')}:00.000000+0000`,
        },
        { signature: `line ${n}`, severity: (n % 4) + 1 },
      ),
    );
    alerts.push(`line ${n}`);
    if (n % 3 === 0) out.push(SURICATA_FLOW);
    if (n % 1000 === 999) out.push('{"event_type":"alert","broken":');
  }
  return { text: out.join('\n') + '\n', alerts };
}

function read(dbFile: string) {
  const db = openDatabase(dbFile, { readonly: true });
  try {
    const signatures = (
      db.prepare('SELECT signature FROM eve_log_latest ORDER BY id').all() as {
        signature: string;
      }[]
    ).map((r) => r.signature);
    const position = db
      .prepare('SELECT inode, offset FROM eve_intake_state')
      .safeIntegers(true)
      .get() as { inode: bigint; offset: bigint } | undefined;
    const rollup = (
      db.prepare('SELECT coalesce(sum(count), 0) AS n FROM eve_minute_rollup').get() as {
        n: number;
      }
    ).n;
    return { signatures, position, rollup };
  } finally {
    db.close();
  }
}

function count(dbFile: string): number {
  try {
    const db = openDatabase(dbFile, { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM eve_log_latest').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0; // not created or not migrated yet
  }
}

/**
 * The alerts of `files` (in order) up to the stored position: every file before the one whose
 * inode it names, and that one up to its offset.
 */
function alertsUpTo(files: string[], position: { inode: bigint; offset: bigint }): string[] {
  const index = files.findIndex((f) => BigInt(fs.statSync(f).ino) === position.inode);
  expect(index).toBeGreaterThanOrEqual(0);
  const out: string[] = [];
  files.slice(0, index + 1).forEach((file, i) => {
    const bytes = fs.readFileSync(file);
    const head = i === index ? bytes.subarray(0, Number(position.offset)) : bytes;
    for (const line of head.toString('utf8').split('\n')) {
      const m = /"signature":"(line \d+)"/.exec(line);
      if (m && line.endsWith('}')) out.push(m[1] as string);
    }
  });
  return out;
}

describe('IDS intake across kill -9 of the appliance process', () => {
  it('stores each alert exactly once through kills, appends and a rotation while down', async () => {
    const dataDir = path.join(dir, 'data');
    const eve = path.join(dir, 'eve.json');
    const dbFile = path.join(dataDir, 'appliance.db');
    const env = {
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_EVE_FILE: eve,
      APPLIANCE_ADMIN_PASSWORD: 'Admin-Passw0rd',
      APPLIANCE_LOG_LEVEL: 'error',
    };
    const all: string[] = [];
    const first = block(0, 60_000);
    fs.writeFileSync(eve, first.text);
    all.push(...first.alerts);
    const files = [eve];
    const kills: number[] = [];

    for (let round = 0; round < 3; round++) {
      server = await startServer(env, [], 60_000);
      const before = count(dbFile);
      // Kill as soon as this run has stored something more: mid-file (the file is far from read).
      const deadline = Date.now() + 60_000;
      while (count(dbFile) <= before) {
        if (Date.now() > deadline) throw new Error(`round ${round}: no progress`);
        await new Promise((r) => setTimeout(r, 5));
      }
      // Then a little later, so that the kill lands anywhere: between groups or inside one.
      await new Promise((r) => setTimeout(r, [0, 90, 170][round]));
      server.child.kill('SIGKILL');
      await server.exited;
      server = null;
      const state = read(dbFile);
      kills.push(state.signatures.length);
      // Exactly the alerts up to the stored position: nothing lost, nothing twice.
      expect(state.position).toBeDefined();
      const current = files[files.length - 1] as string;
      expect(state.signatures).toEqual(
        alertsUpTo(files, state.position as { inode: bigint; offset: bigint }),
      );
      expect(state.rollup).toBe(state.signatures.length);
      // While down: more lines; before the last round, also a rotation to a new file.
      const more = block(100_000 + round * 10_000, 100_000 + round * 10_000 + 5_000);
      fs.appendFileSync(current, more.text);
      all.push(...more.alerts);
      if (round === 1) {
        fs.renameSync(eve, `${eve}.1`);
        files[files.length - 1] = `${eve}.1`;
        const fresh = block(200_000, 210_000);
        fs.writeFileSync(eve, fresh.text);
        files.push(eve);
        all.push(...fresh.alerts);
      }
    }
    expect(kills[kills.length - 1]).toBeLessThan(all.length);

    server = await startServer(env, [], 60_000);
    const started = Date.now();
    const deadline = started + 300_000;
    while (count(dbFile) < all.length) {
      if (Date.now() > deadline) throw new Error(`only ${count(dbFile)} of ${all.length} rows`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const elapsed = Date.now() - started;
    await new Promise((r) => setTimeout(r, 500));
    const stopped = await stopServer(server);
    server = null;
    expect(stopped.code).toBe(0);
    const final = read(dbFile);
    expect(final.signatures).toEqual(all);
    expect(new Set(final.signatures).size).toBe(all.length);
    expect(final.rollup).toBe(all.length);
    expect(Number(final.position?.offset)).toBe(fs.statSync(eve).size);
    console.log(
      `eve kill -9 test: rows after each kill ${kills.join(', ')}; the rest (${all.length - (kills[kills.length - 1] ?? 0)} alerts) in ${elapsed} ms`,
    );
  }, 600_000);
});
