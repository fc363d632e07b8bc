import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { DiskReports, folderUsage, localMounts } from './disk.js';

const root = mkdtempSync(path.join(tmpdir(), 'agent-disk-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(rel: string, size: number) {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), Buffer.alloc(size, 1));
}

describe('disk usage', () => {
  file('a/one.bin', 1000);
  file('a/deep/two.bin', 2500);
  file('a/deep/deeper/three.bin', 300);
  file('b.bin', 777);
  file(';id $(id) -rf/x.bin', 11);
  symlinkSync('/etc/passwd', path.join(root, 'link'));

  it('sums exact sizes and lists children largest first to the depth', async () => {
    const usage = await folderUsage(root, 2);
    const linkSize = path.join('/etc/passwd').length; // a symlink counts as itself
    expect(usage.size).toBe(1000 + 2500 + 300 + 777 + 11 + linkSize);
    expect(usage.children.map((c) => path.basename(c.path))).toEqual([
      'a',
      'b.bin',
      ';id $(id) -rf',
      'link',
    ]);
    const a = usage.children[0];
    expect(a?.size).toBe(3800);
    expect(a?.children.map((c) => [path.basename(c.path), c.size])).toEqual([
      ['deep', 2800],
      ['one.bin', 1000],
    ]);
    // depth 2: the grandchildren of root are listed without their own children
    expect(a?.children[0]?.children).toEqual([]);
  });

  it('takes paths literally: shell syntax is a name, relative and NUL paths are refused', async () => {
    const weird = await folderUsage(path.join(root, ';id $(id) -rf'));
    expect(weird.size).toBe(11);
    await expect(folderUsage('relative/path')).rejects.toThrow('path must be absolute');
    await expect(folderUsage(`${root}\0/etc`)).rejects.toThrow('path must not contain NUL');
    await expect(folderUsage(path.join(root, '$(id)'))).rejects.toThrow(/folder not found/);
    await expect(folderUsage('~')).rejects.toThrow('path must be absolute');
  });

  it('keeps the last generated report; detail fails before the first', async () => {
    const reports = new DiskReports(() => [path.join(root, 'a')]);
    expect(() => reports.detail()).toThrow('no disk usage report; generate one first');
    expect(reports.generate()).toEqual({ started: true });
    await reports.settled();
    expect(reports.detail()).toMatchObject([{ path: path.join(root, 'a'), size: 3800 }]);
  });

  it('lists local mounts from /proc/mounts, decoding escapes', () => {
    expect(
      localMounts(
        '/dev/sda1 / ext4 rw 0 0\nproc /proc proc rw 0 0\n/dev/sdb1 /mnt/my\\040disk xfs rw 0 0\n',
      ),
    ).toEqual(['/', '/mnt/my disk']);
  });
});
