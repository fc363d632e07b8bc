/**
 * Disk usage (docs/agent-protocol.md §4): `folder.usage` of one folder (depth 2), and `disk.generate`,
 * a background scan of every mounted local filesystem (depth 3) whose last report `disk.detail`
 * returns. Sizes are apparent sizes (st_size) summed over the whole tree below a folder; the
 * report lists children to the given depth, at most 200 per folder, largest first. Symbolic links
 * are counted as themselves and never followed; a scan stays on the folder's filesystem.
 */
import { readFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

import { OpError, requirePath } from './paths.js';

export interface UsageNode {
  path: string;
  size: number;
  children: UsageNode[];
}

export const MAX_CHILDREN = 200;

interface Budget {
  entries: number;
}

/**
 * Walks a folder with the asynchronous fs API, so a scan of a whole filesystem never blocks the
 * agent's event loop (it keeps answering requests and checking in meanwhile).
 */
async function walk(dir: string, dev: number, depth: number, budget: Budget): Promise<UsageNode> {
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    names = [];
  }
  const children: UsageNode[] = [];
  let size = 0;
  for (const name of names) {
    if (budget.entries-- <= 0) break;
    const full = path.join(dir, name);
    let stat;
    try {
      stat = await lstat(full);
    } catch {
      continue;
    }
    let node: UsageNode;
    if (stat.isDirectory() && stat.dev === dev) {
      node = await walk(full, dev, depth - 1, budget);
    } else if (stat.isDirectory()) {
      continue; // another filesystem mounted below: it has its own entry in disk.generate
    } else {
      node = { path: full, size: stat.size, children: [] };
    }
    size += node.size;
    children.push(node);
  }
  children.sort((a, b) => b.size - a.size || a.path.localeCompare(b.path));
  return {
    path: dir,
    size,
    children: depth > 0 ? children.slice(0, MAX_CHILDREN) : [],
  };
}

/** Usage of one folder: its total size and its children to `depth` levels. */
export async function folderUsage(
  value: unknown,
  depth = 2,
  maxEntries = 5_000_000,
): Promise<UsageNode> {
  const dir = requirePath(value);
  let stat;
  try {
    stat = await lstat(dir);
  } catch {
    throw new OpError(`folder not found: ${dir}`);
  }
  if (!stat.isDirectory()) throw new OpError(`not a folder: ${dir}`);
  return walk(dir, stat.dev, depth, { entries: maxEntries });
}

const LOCAL_FILESYSTEMS = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'zfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'vfat',
  'exfat',
  'ntfs',
  'ntfs3',
]);

/** Mount points of local filesystems, from /proc/mounts (octal escapes decoded). */
export function localMounts(mountsText: string): string[] {
  const points = new Set<string>();
  for (const line of mountsText.split('\n')) {
    const [, point, type] = line.split(' ');
    if (!point || !type || !LOCAL_FILESYSTEMS.has(type)) continue;
    points.add(
      point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))),
    );
  }
  return [...points].sort();
}

export class DiskReports {
  private last: UsageNode[] | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly mounts: () => string[] = () =>
      localMounts(readFileSync('/proc/mounts', 'utf8')),
  ) {}

  /** Starts a scan in the background (one at a time) and answers at once. */
  generate(): { started: true } {
    if (!this.running) {
      this.running = (async () => {
        try {
          const report: UsageNode[] = [];
          for (const point of this.mounts()) report.push(await folderUsage(point, 3));
          this.last = report;
        } catch {
          this.last = this.last ?? [];
        } finally {
          this.running = null;
        }
      })();
    }
    return { started: true };
  }

  /** Resolves when the scan under way (if any) is done: for tests. */
  async settled(): Promise<void> {
    await this.running;
  }

  detail(): UsageNode[] {
    if (!this.last) throw new OpError('no disk usage report; generate one first');
    return this.last;
  }
}
