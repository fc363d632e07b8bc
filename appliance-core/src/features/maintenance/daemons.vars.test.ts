/**
 * The daemon variables as an engine reads them at start (features/maintenance daemon catalogue):
 * secrets opened, empty values and secrets that no longer open left out, another daemon's never
 * mixed in. Each engine's reading of its own is tested with the engine; the restart applying
 * them end to end in
 * test/daemons/daemon-variables.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DB } from '../../platform/db/database.js';
import { migrate } from '../../platform/db/migrate.js';
import { SecretBox } from '../../platform/security/secret-box.js';
import { daemonVarsForEngine, ensureDaemons, replaceDaemonVars } from './daemons.repository.js';

let dir: string;
let db: DB;
const box = new SecretBox(Buffer.alloc(32, 3));

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'daemon-vars-'));
  db = openDatabase(path.join(dir, 'test.db'));
  migrate(db, Date.now());
  ensureDaemons(db, ['alert-delivery', 'syslog'], 0);
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const idOf = (name: string) =>
  db.prepare('SELECT id FROM daemons WHERE name = ?').pluck().get(name) as number;

describe('daemonVarsForEngine', () => {
  it('opens secrets, leaves out empty values and secrets that no longer open, and keeps daemons apart', () => {
    replaceDaemonVars(
      db,
      idOf('alert-delivery'),
      [
        { var: 'proxy_url', value: 'http://u@127.0.0.1:3128', sealed: 0 },
        { var: 'proxy_password', value: box.seal('pw-1'), sealed: 1 },
      ],
      1,
    );
    replaceDaemonVars(db, idOf('syslog'), [{ var: 'port', value: '', sealed: 0 }], 1);
    expect(daemonVarsForEngine(db, box, 'alert-delivery')).toEqual({
      proxy_url: 'http://u@127.0.0.1:3128',
      proxy_password: 'pw-1',
    });
    expect(daemonVarsForEngine(db, box, 'syslog')).toEqual({});
    expect(daemonVarsForEngine(db, box, 'unknown')).toEqual({});
    // Another data dir's key: the secret is left out (the engine falls back), never thrown.
    const otherBox = new SecretBox(Buffer.alloc(32, 4));
    expect(daemonVarsForEngine(db, otherBox, 'alert-delivery')).toEqual({
      proxy_url: 'http://u@127.0.0.1:3128',
    });
  });
});
