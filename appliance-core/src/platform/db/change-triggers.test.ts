import { describe, expect, it } from 'vitest';
import { watchTables } from './change-triggers.js';
import { openDatabase } from './database.js';

describe('watchTables', () => {
  it('calls back inside every watched write, honouring updateOf and ignoreInsert', () => {
    const db = openDatabase(':memory:');
    db.exec(
      'CREATE TABLE a (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER); CREATE TABLE b (id INTEGER PRIMARY KEY); CREATE TABLE c (id INTEGER PRIMARY KEY);',
    );
    let changes = 0;
    watchTables(
      db,
      'test',
      [{ table: 'a', updateOf: 'x', ignoreInsert: true }, { table: 'b' }],
      () => changes++,
    );
    db.prepare('INSERT INTO a (x, y) VALUES (1, 1)').run();
    expect(changes).toBe(0);
    db.prepare('UPDATE a SET y = 2').run();
    expect(changes).toBe(0);
    db.prepare('UPDATE a SET x = 2').run();
    expect(changes).toBe(1);
    db.prepare('DELETE FROM a').run();
    expect(changes).toBe(2);
    db.prepare('INSERT INTO b DEFAULT VALUES').run();
    db.prepare('INSERT INTO c DEFAULT VALUES').run();
    expect(changes).toBe(3);
    expect(
      db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger'").get(),
    ).toEqual({ n: 0 });
  });

  it('refuses names that are not plain identifiers', () => {
    const db = openDatabase(':memory:');
    expect(() => watchTables(db, 'x; DROP', [], () => {})).toThrow();
    expect(() => watchTables(db, 'ok', [{ table: 'a; DROP' }], () => {})).toThrow();
  });
});
