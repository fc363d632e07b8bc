/**
 * Last-use times are batched and flushed on a timer: a flush that meets a database busy past
 * busy_timeout (the storage writer holding the write lock under an intake flood) must keep the
 * uses for the next flush instead of throwing from the timer, which would end the process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { systemClock } from '../../platform/time/time.js';
import { seedSuperAdmin } from '../users/index.js';
import { TokenService } from './tokens.service.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function setUp(): Promise<{ db: DB; file: string; tokens: TokenService }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-use-'));
  const file = path.join(dir, 'appliance.db');
  const db = openDatabase(file);
  migrate(db, systemClock.now());
  await seedSuperAdmin(db, systemClock.now(), 'Admin-Passw0rd');
  cleanups.push(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { db, file, tokens: new TokenService(db, systemClock) };
}

const lastUsed = (db: DB, id: number) =>
  db.prepare('SELECT last_used_at FROM access_tokens WHERE id = ?').pluck().get(id) as
    number | null;

describe('token last-use flush', () => {
  it('keeps the uses pending while another connection holds the write lock, then writes them', async () => {
    const { db, file, tokens } = await setUp();
    const token = tokens.mint({ userId: 1, name: 'busy', kind: 'pat', ttlMs: 3_600_000 });
    tokens.noteUse(token.id);
    db.pragma('busy_timeout = 20');
    const other = openDatabase(file);
    cleanups.push(() => other.close());
    other.exec('BEGIN IMMEDIATE');
    expect(tokens.flushUse()).toBe(false);
    expect(tokens.busyFlushes).toBe(1);
    expect(lastUsed(db, token.id)).toBeNull();
    other.exec('COMMIT');
    expect(tokens.flushUse()).toBe(true);
    expect(lastUsed(db, token.id)).toEqual(expect.any(Number));
    // Nothing is left pending: a second flush writes nothing and succeeds.
    expect(tokens.flushUse()).toBe(true);
  });

  it('still throws what is not a busy database', async () => {
    const { db, tokens } = await setUp();
    const token = tokens.mint({ userId: 1, name: 'gone', kind: 'pat', ttlMs: 3_600_000 });
    tokens.noteUse(token.id);
    db.exec('DROP TABLE access_tokens');
    expect(() => tokens.flushUse()).toThrow(/no such table/);
  });
});
