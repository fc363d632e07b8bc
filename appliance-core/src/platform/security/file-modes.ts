/**
 * The files the appliance creates in its data dir hold its secrets (the database with sealed
 * secrets and token digests, the secret key, the TLS key, the initial password): they are 0600
 * and the directories the appliance creates are 0700, whatever the umask. A data dir made by an
 * older release (database 0644) is tightened at start. Files an operator places (the geoip/
 * databases) are left as they are. A chmod that fails (a file owned by another user, a read-only
 * mount) is logged and the start goes on: the appliance still works, and the log says why the
 * modes are wider than they should be.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/** The appliance's own files and directories, relative to the data dir. */
export const OWN_FILES = [
  'appliance.db',
  'appliance.db-wal',
  'appliance.db-shm',
  'appliance.db-journal',
  'secret.key',
  'initial-admin-password',
] as const;
/** Every regular file in these directories is the appliance's (TLS material, installed or made). */
export const OWN_FILE_DIRS = ['tls'] as const;
export const OWN_DIRS = ['.', 'tls'] as const;

/**
 * Creates the database file 0600 when it does not exist, so that SQLite's -wal and -shm files,
 * which take the database file's mode, are 0600 from their first byte.
 */
export function createPrivateFile(file: string): void {
  try {
    fs.closeSync(
      fs.openSync(
        file,
        fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY,
        PRIVATE_FILE,
      ),
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** Sets 0600 on the appliance's files and 0700 on its directories; returns what could not be set. */
export function tightenDataDir(dataDir: string, warn: (message: string) => void): string[] {
  const failed: string[] = [];
  const tighten = (relative: string, mode: number) => {
    const target = path.join(dataDir, relative);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(target);
    } catch {
      return; // not there (yet): nothing to tighten
    }
    if (stat.isSymbolicLink() || (stat.mode & 0o777) === mode) return;
    try {
      fs.chmodSync(target, mode);
    } catch (err) {
      failed.push(relative);
      warn(
        `cannot set mode ${mode.toString(8)} on ${target} (${(err as NodeJS.ErrnoException).code ?? 'error'}); it stays ${(stat.mode & 0o777).toString(8)}`,
      );
    }
  };
  for (const dir of OWN_DIRS) tighten(dir, PRIVATE_DIR);
  for (const file of OWN_FILES) tighten(file, PRIVATE_FILE);
  for (const dir of OWN_FILE_DIRS) {
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(path.join(dataDir, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries)
      if (entry.isFile()) tighten(path.join(dir, entry.name), PRIVATE_FILE);
  }
  return failed;
}
