/**
 * The embedded appliance's lifecycle with the real appliance-core (appliance-core/dist/server.js
 * forked with an IPC channel, as utilityProcess.fork does in the app): first start, warm start,
 * the basic_text fallback, a crash with its log tail, restart from the window, collectors.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { buildCore } from '../../test/harness/build-core.js';
import {
  createDesktopStack,
  readAll,
  tempUserData,
  type DesktopStack,
} from '../../test/harness/desktop-stack.js';
import { FakeSafeStorage } from '../../test/harness/fake-electron.js';
import { probeCertificate } from '../connections/certificate-pinning.js';
import { PASSWORD_FILE_NAME } from './embedded-credentials.js';

beforeAll(() => buildCore(), 120_000);

const stacks: DesktopStack[] = [];
function stack(options: Parameters<typeof createDesktopStack>[0] = {}): DesktopStack {
  const created = createDesktopStack(options);
  stacks.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

async function me(desktop: DesktopStack) {
  return readAll(await desktop.fetch('embedded', '/api/me'));
}

describe('the embedded appliance', () => {
  it('first start: data in user-data, a free loopback port, its certificate pinned, signed in as admin', async () => {
    const desktop = stack();
    const ready = await desktop.embedded.start();
    expect(ready.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.url).not.toBe('https://127.0.0.1:8443');

    const dataDir = path.join(desktop.userData, 'appliance');
    expect(fs.existsSync(path.join(dataDir, 'appliance.db'))).toBe(true);
    // The password was ours (APPLIANCE_ADMIN_PASSWORD): the appliance wrote no file of its own.
    expect(fs.existsSync(path.join(dataDir, 'initial-admin-password'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, PASSWORD_FILE_NAME))).toBe(false);
    const secretFile = path.join(desktop.userData, 'secrets', 'embedded-admin-password.bin');
    expect(fs.existsSync(secretFile)).toBe(true);
    const password = desktop.vault.get('embedded-admin-password') as string;
    expect(password).toMatch(/^Aa1-/);
    expect(fs.readFileSync(secretFile).includes(password)).toBe(false);
    expect(desktop.forkedEnvs[0]).toMatchObject({
      APPLIANCE_DATA_DIR: dataDir,
      APPLIANCE_BIND: '127.0.0.1',
      APPLIANCE_HTTPS_PORT: '0',
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
      APPLIANCE_ADMIN_PASSWORD: password,
      NODE_COMPILE_CACHE: path.join(desktop.userData, 'compile-cache'),
    });

    // Pinned from the ready message: the certificate the appliance really serves.
    const served = await probeCertificate(ready.url, { trustStore: () => [] });
    const cert = new X509Certificate(
      fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'),
    );
    expect(desktop.store.get('embedded')).toMatchObject({
      kind: 'embedded',
      origin: ready.url,
      pinnedSha256: served.sha256,
    });
    expect(served.sha256).toBe(cert.fingerprint256);

    const answer = await me(desktop);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ id: 1, username: 'admin' });
    expect(desktop.sessions.status('embedded')).toEqual({
      connectionId: 'embedded',
      signedIn: true,
      method: 'password',
    });
    expect(desktop.embedded.status()).toMatchObject({
      state: 'ready',
      passwordStorage: 'os-keychain',
      collectors: { enabled: false, bindAddress: '127.0.0.1', ports: {} },
      failure: null,
    });
  });

  it('warm start: the same password, never passed again, and a fresh sign-in when the token is gone', async () => {
    const keyring = new FakeSafeStorage();
    const userData = tempUserData();
    const first = stack({ userData, safeStorage: keyring });
    await first.embedded.start();
    expect((await me(first)).status).toBe(200);
    const t0 = Date.now();
    await first.embedded.stop();
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(first.embedded.status().state).toBe('stopped');

    const second = stack({ userData, safeStorage: keyring });
    const ready = await second.embedded.start();
    expect(second.forkedEnvs[0]).not.toHaveProperty('APPLIANCE_ADMIN_PASSWORD');
    expect(second.store.get('embedded')?.origin).toBe(ready.url);
    // The token of the first run is still in the keyring and still valid.
    expect((await me(second)).status).toBe(200);
    // Without it, the app signs in again with the kept password.
    second.tokens.delete('embedded');
    expect((await me(second)).status).toBe(200);
    expect(second.sessions.status('embedded').signedIn).toBe(true);
  });

  it('without a keyring (basic_text): the password in a 0600 file in the data dir, usable after a restart', async () => {
    const userData = tempUserData();
    const first = stack({ userData, safeStorage: new FakeSafeStorage('basic_text') });
    await first.embedded.start();
    expect(first.vault.storage).toBe('memory-only');
    const file = path.join(userData, 'appliance', PASSWORD_FILE_NAME);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(userData, 'secrets'))).toBe(false);
    expect(first.embedded.status().passwordStorage).toBe('file-in-data-dir');
    expect((await me(first)).status).toBe(200);
    await first.embedded.stop();

    // A new start: memory is empty (no token), the file still signs the app in.
    const second = stack({ userData, safeStorage: new FakeSafeStorage('basic_text') });
    await second.embedded.start();
    expect(second.tokens.get('embedded')).toBeUndefined();
    expect((await me(second)).status).toBe(200);
  });

  it('a crash is reported with the tail of its log; restart from the window brings it back', async () => {
    const desktop = stack({ embedded: { supervisor: { maxFailures: 1 } } });
    const ready = await desktop.embedded.start();
    expect((await me(desktop)).status).toBe(200);

    process.kill(desktop.embedded.pid as number, 'SIGKILL');
    await waitFor(() => desktop.embedded.status().state === 'failed');
    const status = desktop.embedded.status();
    expect(status.failure?.message).toMatch(/exited with code 137/);
    expect(status.failure?.logTail.join('\n')).toContain(`appliance listening on ${ready.url}`);
    const refused = await readAll(await desktop.fetch('embedded', '/api/me'));
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text)).toMatchObject({ proxy: { code: 'appliance-not-ready' } });

    const again = await desktop.embedded.restart();
    expect(again.url).not.toBe(ready.url);
    expect(desktop.store.get('embedded')?.origin).toBe(again.url);
    expect((await me(desktop)).status).toBe(200);
    expect(desktop.embedded.status()).toMatchObject({ state: 'ready', failure: null });
  });

  it('restarts by itself after a crash, on a new port, and the proxy follows', async () => {
    const desktop = stack({ embedded: { supervisor: { initialRestartDelayMs: 50 } } });
    const ready = await desktop.embedded.start();
    process.kill(desktop.embedded.pid as number, 'SIGKILL');
    await waitFor(() => desktop.statuses.some((s) => s.state === 'restarting'));
    // The proxy waits for the restarted appliance instead of failing.
    const answer = await me(desktop);
    expect(answer.status).toBe(200);
    expect(desktop.store.get('embedded')?.origin).not.toBe(ready.url);
  });

  it('collectors: off until turned on, then on the chosen address with last ports or auto, never the defaults', async () => {
    const desktop = stack();
    await desktop.embedded.start();
    expect(desktop.forkedEnvs[0]).toMatchObject({
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
    });

    expect(() =>
      desktop.embedded.checkCollectorSettings({ enabled: true, bindAddress: '192.0.2.77' }),
    ).toThrow(/not an address of this computer/);
    await desktop.embedded.setCollectors({ enabled: true, bindAddress: '127.0.0.1' });
    expect(desktop.forkedEnvs.at(-1)).toMatchObject({
      APPLIANCE_COLLECTOR_BIND: '127.0.0.1',
      APPLIANCE_SYSLOG_PORT: 'auto',
      APPLIANCE_NETFLOW_PORT: 'auto',
    });
    expect(desktop.embedded.status()).toMatchObject({
      state: 'ready',
      collectors: { enabled: true, bindAddress: '127.0.0.1' },
    });
    expect((await me(desktop)).status).toBe(200);

    // Last ports are reused when free; the standalone defaults never are.
    const settingsFile = path.join(desktop.userData, 'embedded-appliance.json');
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    settings.lastPorts = { syslog: { udp: 5514, tcp: 5514 }, netflow: { udp: 47123 } };
    fs.writeFileSync(settingsFile, JSON.stringify(settings));
    await desktop.embedded.stop();
    const next = stack({ userData: desktop.userData, safeStorage: desktop.safeStorage });
    await next.embedded.start();
    expect(next.forkedEnvs[0]).toMatchObject({
      APPLIANCE_SYSLOG_PORT: 'auto',
      APPLIANCE_NETFLOW_PORT: '47123',
    });
    await next.embedded.setCollectors({ enabled: false, bindAddress: '127.0.0.1' });
    expect(next.forkedEnvs.at(-1)).toMatchObject({
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
    });
    expect(next.forkedEnvs.at(-1)).not.toHaveProperty('APPLIANCE_COLLECTOR_BIND');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
