/**
 * The OS upgrader on loopback (plain HTTP, port 0) with its command runner injected and the apt
 * sources and token file in a temp directory: nothing is upgraded or rebooted. Proves the token
 * file (0600), a wrong token refused with nothing run, the one-time token, the upgrade command's
 * steps in order, and a failed step stopping the workflow before the reboot.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OsUpgrader, rewriteCodename } from './os-upgrader.server.js';
import { realFiles, type CommandResult } from './root-helper.server.js';

let dir: string;
let calls: { program: string; args: readonly string[] }[];
let failOn: string | null;
let upgrader: OsUpgrader;
let base: string;
const TOKEN = 'T'.repeat(43);

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'os-upgrader-'));
  calls = [];
  failOn = null;
  fs.writeFileSync(
    path.join(dir, 'sources.list'),
    'deb http://deb.debian.org/debian bookworm main\ndeb http://deb.debian.org/debian bookworm-updates main\ndeb http://security.debian.org/debian-security bookworm-security main\n# not-bookworm2 stays\n',
  );
  upgrader = new OsUpgrader({
    run: async (program, args): Promise<CommandResult> => {
      calls.push({ program, args });
      return `${program} ${args.at(-1)}` === failOn
        ? { code: 100, stdout: '', stderr: 'E: Failed to fetch' }
        : { code: 0, stdout: '', stderr: '' };
    },
    files: realFiles,
    tokenFile: path.join(dir, 'run/token'),
    from: 'bookworm',
    to: 'trixie',
    aptSources: [path.join(dir, 'sources.list'), path.join(dir, 'absent.list')],
    randomToken: () => TOKEN,
  });
  await new Promise<void>((resolve) => upgrader.server.listen(0, '127.0.0.1', resolve));
  upgrader.issueToken();
  base = `http://127.0.0.1:${(upgrader.server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await upgrader.workflow;
  await new Promise<void>((resolve) => upgrader.server.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

const upgrade = (token: string) =>
  fetch(`${base}/upgrade`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });

describe('the OS upgrader', () => {
  it('writes its token file 0600 and serves the page with the reboot warning', async () => {
    const file = path.join(dir, 'run/token');
    expect(fs.readFileSync(file, 'utf8')).toBe(`${TOKEN}\n`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('reboots the appliance');
  });

  it('refuses a wrong, empty or oversized token and runs nothing', async () => {
    for (const token of ['', 'nope', `${TOKEN}x`, 'T'.repeat(5000)])
      expect((await upgrade(token)).status).toBe(403);
    expect(calls).toEqual([]);
    expect(upgrader.state).toBe('idle');
  });

  it('runs the upgrade command once per token: sources, update, full-upgrade, reboot', async () => {
    const res = await upgrade(TOKEN);
    expect(res.status).toBe(202);
    await upgrader.workflow;
    expect(fs.readFileSync(path.join(dir, 'sources.list'), 'utf8')).toBe(
      'deb http://deb.debian.org/debian trixie main\ndeb http://deb.debian.org/debian trixie-updates main\ndeb http://security.debian.org/debian-security trixie-security main\n# not-bookworm2 stays\n',
    );
    expect(calls).toEqual([
      { program: 'apt-get', args: ['update'] },
      {
        program: 'apt-get',
        args: [
          '-y',
          '-o',
          'Dpkg::Options::=--force-confdef',
          '-o',
          'Dpkg::Options::=--force-confold',
          'full-upgrade',
        ],
      },
      { program: 'systemctl', args: ['reboot'] },
    ]);
    expect(upgrader.state).toBe('rebooting');
    // The token was used: it is dead.
    expect((await upgrade(TOKEN)).status).toBe(403);
    expect(calls).toHaveLength(3);
    const status = (await (await fetch(`${base}/status`)).json()) as { steps: { state: string }[] };
    expect(status.steps.map((s) => s.state)).toEqual(['done', 'done', 'done', 'done']);
    expect(JSON.stringify(status)).not.toContain(TOKEN);
  });

  it('stops before the reboot when a step fails', async () => {
    failOn = 'apt-get update';
    expect((await upgrade(TOKEN)).status).toBe(202);
    await upgrader.workflow;
    expect(upgrader.state).toBe('failed');
    expect(calls.map((c) => c.args.at(-1))).toEqual(['update']);
    expect(upgrader.steps[1]).toMatchObject({
      state: 'failed',
      message: 'apt-get failed: E: Failed to fetch',
    });
  });

  it('rewrites the codename as a whole word only', () => {
    expect(
      rewriteCodename('bookworm bookworm-security bookworms xbookworm', 'bookworm', 'trixie'),
    ).toBe('trixie trixie-security bookworms xbookworm');
  });
});
