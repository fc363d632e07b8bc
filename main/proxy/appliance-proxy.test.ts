/**
 * The main-process proxy as a plain module (Fetch Request in, Fetch Response out) against a real
 * appliance started by the test (`appliance-core/dist/server.js`) and a recording TLS server:
 * JSON, an event stream that arrives frame by frame, refusals, the pinned certificate, the
 * injected bearer, and no token in anything the renderer receives.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PROXY_ERROR_HEADER } from '../../electron/contract/bridge.js';
import { buildCore } from '../../test/harness/build-core.js';
import {
  createDesktopStack,
  readAll,
  type DesktopStack,
} from '../../test/harness/desktop-stack.js';
import { startServer, stopServer, type Started } from '../../test/harness/process.js';
import { makeSelfSigned } from '../../test/harness/tls-certs.js';
import { startTlsServer, type TestTlsServer } from '../../test/harness/tls-server.js';
import { createApplianceProxy } from './appliance-proxy.js';

const PASSWORD = 'Proxy-Test-Passw0rd';

let appliance: Started;
let recorder: TestTlsServer;
let desktop: DesktopStack;
let applianceId: string;
let recorderId: string;
/** Everything the renderer received in these tests: no token may ever be in it. */
const seenByRenderer: string[] = [];

async function received(response: Response) {
  const all = await readAll(response);
  seenByRenderer.push(JSON.stringify(all.headers), all.text);
  return all;
}

beforeAll(async () => {
  buildCore();
  appliance = await startServer({
    APPLIANCE_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-appliance-')),
    APPLIANCE_ADMIN_PASSWORD: PASSWORD,
  });
  recorder = await startTlsServer(await makeSelfSigned(), (request, response) => {
    response.writeHead(200, {
      'content-type': 'application/json',
      'set-cookie': 'session=abc; HttpOnly',
      'strict-transport-security': 'max-age=31536000',
      'x-appliance-header': 'kept',
    });
    response.end(JSON.stringify({ path: request.url }));
  });
  desktop = createDesktopStack();
  for (const origin of [appliance.url, recorder.origin]) {
    const probe = await desktop.registry.probe(origin);
    const saved = await desktop.registry.add({
      url: origin,
      acceptSha256: probe.certificate.sha256,
    });
    if (origin === appliance.url) applianceId = saved.id;
    else recorderId = saved.id;
  }
  const signedIn = await desktop.sessions.signInWithPassword({
    connectionId: applianceId,
    username: 'admin',
    password: PASSWORD,
  });
  expect(signedIn.status).toBe('signed-in');
  desktop.tokens.set(recorderId, { kind: 'login', accessToken: 'recorder-token-1234567890' });
}, 120_000);

afterAll(async () => {
  const tokens = [desktop.tokens.get(applianceId)?.accessToken, 'recorder-token-1234567890'].filter(
    (token): token is string => token !== undefined,
  );
  for (const text of seenByRenderer) {
    for (const token of tokens) expect(text).not.toContain(token);
  }
  await desktop.close();
  await recorder.close();
  await stopServer(appliance);
});

describe('the appliance proxy', () => {
  it('forwards JSON with the bearer the main process holds', async () => {
    const me = await received(await desktop.fetch(applianceId, '/api/me'));
    expect(me.status).toBe(200);
    expect(me.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(me.text)).toMatchObject({ id: 1, username: 'admin' });

    const created = await received(
      await desktop.fetch(applianceId, '/api/tokens', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'from the console', expires_in_days: 1 }),
      }),
    );
    expect(created.status).toBe(201);
    expect(JSON.parse(created.text)).toMatchObject({ name: 'from the console' });

    const listed = await received(await desktop.fetch(applianceId, '/api/tokens?x=1'));
    expect(JSON.parse(listed.text).tokens.map((t: { name: string }) => t.name)).toContain(
      'from the console',
    );
  });

  it('streams an event stream frame by frame as the appliance sends it', async () => {
    const response = await desktop.fetch(applianceId, '/api/SSEgetPingInfo/127.0.0.1');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: Array<{ at: number; frames: number }> = [];
    let text = '';
    const start = Date.now();
    for (let reads = 0; reads < 200; reads++) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = decoder.decode(value, { stream: true });
      text += chunk;
      arrivals.push({ at: Date.now() - start, frames: (chunk.match(/^data:/gm) ?? []).length });
    }
    seenByRenderer.push(text);
    const withFrames = arrivals.filter((arrival) => arrival.frames > 0);
    expect((text.match(/^data:/gm) ?? []).length).toBeGreaterThanOrEqual(5);
    // Frames arrive over the probes' seconds, not all at the end.
    expect(withFrames.length).toBeGreaterThanOrEqual(5);
    expect(withFrames[0]!.at).toBeLessThan(withFrames.at(-1)!.at - 3_000);
  }, 30_000);

  it('refuses a connection that does not exist', async () => {
    for (const url of [
      'app://console/appliances/c-000000000000/api/me',
      'app://console/appliances/Embedded/api/me',
      'app://console/appliances/c-zz/api/me',
      'app://console/appliances/api/me',
    ]) {
      const answer = await received(await desktop.proxy(new Request(url)));
      expect(answer.status).toBe(404);
      expect(answer.headers[PROXY_ERROR_HEADER]).toBe('unknown-connection');
    }
  });

  it('refuses sign-in, sign-out, OAuth token endpoints and /auth pages before sending anything', async () => {
    const before = recorder.requests.length;
    for (const path of [
      '/api/login',
      '/api/%6cogin',
      '/api/logout',
      '/api/oauth/token/refresh',
      '/api/oauth/device/token',
      '/auth/token',
      '/auth/device',
      '/',
    ]) {
      const answer = await received(
        await desktop.fetch(recorderId, path, { method: 'POST', body: '{}' }),
      );
      expect(answer.status, path).toBe(403);
      expect(answer.headers[PROXY_ERROR_HEADER]).toBe('path-refused');
    }
    expect(recorder.requests.length).toBe(before);
  });

  it('sends its own bearer, drops the renderer credentials and cookies both ways', async () => {
    const answer = await received(
      await desktop.fetch(recorderId, '/api/devices?tag=a', {
        headers: {
          authorization: 'Bearer chosen-by-the-page',
          cookie: 'session=stolen',
          origin: 'https://attacker.test',
          'x-forwarded-for': '203.0.113.9',
          'last-event-id': '7',
          accept: 'application/json',
        },
      }),
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ path: '/api/devices?tag=a' });
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.headers['strict-transport-security']).toBeUndefined();
    expect(answer.headers['x-appliance-header']).toBe('kept');
    const seen = recorder.requests.at(-1)!;
    expect(seen.headers.authorization).toBe('Bearer recorder-token-1234567890');
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers.origin).toBeUndefined();
    expect(seen.headers['x-forwarded-for']).toBeUndefined();
    expect(seen.headers['last-event-id']).toBe('7');
  });

  it('refuses a connection without a sign-in', async () => {
    const token = desktop.tokens.get(recorderId)!;
    desktop.tokens.delete(recorderId);
    try {
      const before = recorder.requests.length;
      const answer = await received(await desktop.fetch(recorderId, '/api/me'));
      expect(answer.status).toBe(401);
      expect(answer.headers[PROXY_ERROR_HEADER]).toBe('not-signed-in');
      expect(recorder.requests.length).toBe(before);
    } finally {
      desktop.tokens.set(recorderId, token);
    }
  });

  it('refuses a peer whose certificate is not the pinned one, with both fingerprints', async () => {
    const pinned = desktop.store.get(applianceId)!.pinnedSha256!;
    const other = await makeSelfSigned();
    desktop.store.update(applianceId, { pinnedSha256: other.sha256 });
    desktop.registry.agentFor(desktop.store.get(applianceId)!).destroy();
    try {
      const answer = await received(await desktop.fetch(applianceId, '/api/me'));
      expect(answer.status).toBe(502);
      expect(answer.headers[PROXY_ERROR_HEADER]).toBe('certificate-changed');
      expect(JSON.parse(answer.text).proxy).toEqual({
        code: 'certificate-changed',
        connectionId: applianceId,
        pinnedSha256: other.sha256,
        presentedSha256: pinned,
      });
    } finally {
      desktop.store.update(applianceId, { pinnedSha256: pinned });
    }
    expect((await received(await desktop.fetch(applianceId, '/api/me'))).status).toBe(200);
  });

  it('buffers request bodies up to a limit', async () => {
    const small = createApplianceProxy({
      connections: desktop.registry,
      sessions: desktop.sessions,
      log: () => undefined,
      maxRequestBodyBytes: 16,
    });
    const answer = await received(
      await small(
        new Request(`app://console/appliances/${recorderId}/api/x`, {
          method: 'POST',
          body: 'x'.repeat(17),
        }),
      ),
    );
    expect(answer.status).toBe(413);
    expect(answer.headers[PROXY_ERROR_HEADER]).toBe('request-too-large');
  });

  it('says when an appliance cannot be reached', async () => {
    const server = await startTlsServer(await makeSelfSigned());
    const probe = await desktop.registry.probe(server.origin);
    const saved = await desktop.registry.add({
      url: server.origin,
      acceptSha256: probe.certificate.sha256,
    });
    desktop.tokens.set(saved.id, { kind: 'login', accessToken: 'gone-token-0987654321' });
    await server.close();
    const answer = await received(await desktop.fetch(saved.id, '/api/me'));
    expect(answer.status).toBe(502);
    expect(answer.headers[PROXY_ERROR_HEADER]).toBe('appliance-unreachable');
    expect(JSON.parse(answer.text).error).toMatch(/connection refused/);
  });
});
