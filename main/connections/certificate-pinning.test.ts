/**
 * Trust on first use and certificate changes, against real local TLS servers whose certificates
 * the test makes (a throw-away CA stands in for the operating system's store).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  makeCa,
  makeSelfSigned,
  type TestCa,
  type TestCertificate,
} from '../../test/harness/tls-certs.js';
import { startTlsServer, type TestTlsServer } from '../../test/harness/tls-server.js';
import { exchangeJson } from './appliance-http.js';
import { CertificateChangedError, decidePin } from './certificate-pinning.js';
import { ConnectionRegistry } from './connection-registry.js';
import { ConnectionStore, type SavedConnection } from './connection-store.js';

let ca: TestCa;
let selfA: TestCertificate;
let selfB: TestCertificate;
let server: TestTlsServer;

beforeAll(async () => {
  ca = await makeCa();
  selfA = await makeSelfSigned();
  selfB = await makeSelfSigned();
  server = await startTlsServer(selfA);
});

afterAll(async () => {
  await server.close();
});

function setup(trustedCas: () => string[] = () => [ca.cert]) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pinning-')), 'connections.json');
  const logged: string[] = [];
  const store = new ConnectionStore(file);
  const registry = new ConnectionRegistry({
    store,
    trustStore: trustedCas,
    log: (m) => logged.push(m),
  });
  const get = (connection: SavedConnection) =>
    exchangeJson({
      origin: connection.origin,
      agent: registry.agentFor(connection),
      method: 'GET',
      path: '/api/me',
      headers: { authorization: 'Bearer secret-token' },
    });
  return { store, registry, get, logged };
}

describe('decidePin', () => {
  it('accepts the pin, re-pins a certificate the OS trusts, refuses the rest', () => {
    expect(decidePin('AA', 'AA', false)).toEqual({ action: 'accept' });
    expect(decidePin('AA', 'BB', true)).toEqual({ action: 'repin', presentedSha256: 'BB' });
    expect(decidePin(null, 'BB', true)).toEqual({ action: 'repin', presentedSha256: 'BB' });
    expect(decidePin('AA', 'BB', false)).toEqual({
      action: 'refuse',
      pinnedSha256: 'AA',
      presentedSha256: 'BB',
    });
    expect(decidePin(null, 'BB', false)).toEqual({
      action: 'refuse',
      pinnedSha256: null,
      presentedSha256: 'BB',
    });
  });
});

describe('pinning against a real TLS server', () => {
  it('first use: shows the fingerprint, pins it on acceptance, then talks', async () => {
    server.useCertificate(selfA);
    const { registry, get } = setup();
    const probe = await registry.probe(server.origin);
    expect(probe).toMatchObject({ origin: server.origin, pinnedSha256: null, status: 'new' });
    expect(probe.certificate).toMatchObject({ sha256: selfA.sha256, trustedByOs: false });
    expect(probe.certificate.subject).toContain('CN=self-signed test appliance');

    const connection = await registry.add({ url: server.origin, acceptSha256: selfA.sha256 });
    expect(connection.pinnedSha256).toBe(selfA.sha256);
    const before = server.requests.length;
    await expect(get(connection)).resolves.toMatchObject({ status: 200, body: { ok: true } });
    expect(server.requests.length).toBe(before + 1);
    expect((await registry.probe(server.origin)).status).toBe('unchanged');
    registry.close();
  });

  it('refuses to save a certificate other than the one the user accepted', async () => {
    server.useCertificate(selfA);
    const { registry, store } = setup();
    await expect(registry.add({ url: server.origin, acceptSha256: selfB.sha256 })).rejects.toThrow(
      /presents another certificate/,
    );
    expect(store.list()).toEqual([]);
  });

  it('changed self-signed: refused with both fingerprints, nothing sent, until re-pinned', async () => {
    server.useCertificate(selfA);
    const { registry, store, get } = setup();
    const connection = await registry.add({ url: server.origin, acceptSha256: selfA.sha256 });
    await get(connection);

    server.useCertificate(selfB);
    const probe = await registry.probe(server.origin);
    expect(probe).toMatchObject({ status: 'changed', pinnedSha256: selfA.sha256 });
    expect(probe.certificate.sha256).toBe(selfB.sha256);

    const before = server.requests.length;
    const refused = await get(connection).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CertificateChangedError);
    expect(refused).toMatchObject({ pinnedSha256: selfA.sha256, presentedSha256: selfB.sha256 });
    expect(server.requests.length).toBe(before);
    expect(store.get(connection.id)?.pinnedSha256).toBe(selfA.sha256);

    await expect(registry.repin({ id: connection.id, acceptSha256: selfA.sha256 })).rejects.toThrow(
      /presents another certificate/,
    );
    await registry.repin({ id: connection.id, acceptSha256: selfB.sha256 });
    await expect(get(connection)).resolves.toMatchObject({ status: 200 });
    expect(server.requests.length).toBe(before + 1);
    registry.close();
  });

  it('changed to a certificate the OS trusts for this host: accepted and re-pinned', async () => {
    server.useCertificate(selfA);
    const { registry, store, get, logged } = setup();
    const connection = await registry.add({ url: server.origin, acceptSha256: selfA.sha256 });

    const installed = await ca.issue(['127.0.0.1', 'localhost']);
    server.useCertificate(installed);
    expect((await registry.probe(server.origin)).status).toBe('changed-trusted');
    await expect(get(connection)).resolves.toMatchObject({ status: 200 });
    expect(store.get(connection.id)?.pinnedSha256).toBe(installed.sha256);
    expect(logged.join('\n')).toMatch(/re-pinned/);
    expect((await registry.probe(server.origin)).status).toBe('unchanged');
    registry.close();
  });

  it('a CA-signed certificate for another host, or from a CA the OS does not trust, is refused', async () => {
    server.useCertificate(selfA);
    const { registry, store, get } = setup();
    const connection = await registry.add({ url: server.origin, acceptSha256: selfA.sha256 });

    server.useCertificate(await ca.issue(['appliance.example.com']));
    await expect(get(connection)).rejects.toBeInstanceOf(CertificateChangedError);

    const untrustingRegistry = setup(() => []);
    const other = await untrustingRegistry.registry.add({
      url: server.origin,
      acceptSha256: (await untrustingRegistry.registry.probe(server.origin)).certificate.sha256,
    });
    server.useCertificate(await ca.issue(['127.0.0.1']));
    await expect(untrustingRegistry.get(other)).rejects.toBeInstanceOf(CertificateChangedError);
    expect(store.get(connection.id)?.pinnedSha256).toBe(selfA.sha256);
    registry.close();
    untrustingRegistry.registry.close();
  });
});
