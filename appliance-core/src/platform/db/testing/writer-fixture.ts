/**
 * What the storage writer's test files share (storage-writer.test.ts, .lifecycle, .shutdown): a
 * real SQLite file in a temporary directory with the parent/child schema, its teardown after the
 * test's writers close, a bounded wait, and a look at a writer's worker.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { openDatabase, type DB } from '../database.js';
import type { StorageWriter } from '../storage-writer.js';

/** `child` rows reference `parent` 1 (a foreign key the writer must honour). */
export const CHILD_SCHEMA = `
  CREATE TABLE parent (id INTEGER PRIMARY KEY) STRICT;
  CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent (id), value INTEGER NOT NULL, note TEXT) STRICT;
  INSERT INTO parent (id) VALUES (1);`;
export const CHILD_INSERT = 'INSERT INTO child (id, parent_id, value, note) VALUES (?, ?, ?, ?)';

export interface WriterFixture {
  dir: string;
  file: string;
  db: DB;
}

/** A new database file `test.db` in a new temporary directory, with `schema` applied. */
export function openFixture(prefix: string, schema = CHILD_SCHEMA): WriterFixture {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const file = path.join(dir, 'test.db');
  const db = openDatabase(file);
  db.exec(schema);
  return { dir, file, db };
}

/** Closes `writers` (in order), then the connection, then removes the directory. */
export async function closeFixture(
  fixture: Pick<WriterFixture, 'dir' | 'db'>,
  writers: StorageWriter[],
): Promise<void> {
  for (const w of writers) await w.close();
  fixture.db.close();
  fs.rmSync(fixture.dir, { recursive: true, force: true });
}

export const countChildren = (db: DB) =>
  (db.prepare('SELECT count(*) AS n FROM child').get() as { n: number }).n;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `done()` holds. */
export async function until(done: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(5);
}

/** The writer's current worker thread (a private field), null while none runs. */
export const workerOf = <W = Worker>(w: StorageWriter) =>
  (w as unknown as { worker: W | null }).worker;
