/**
 * APPLIANCE_PUBLIC_ORIGIN (issue 11): when set, it wins over the Host header in every absolute
 * URL the appliance hands out: the discovery documents, the device flow's verification URIs and
 * the WWW-Authenticate header of a 401. Without it the Host header is used as received, and a
 * Host that is not host[:port] never reaches a header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

const PUBLIC = 'https://nms.example.net:8443';
const HOSTILE_HOST = 'attacker.example';

let configured: Harness;
let plain: Harness;
let addressCounter = 0;
const nextAddress = () => `198.19.200.${++addressCounter}`;

const get = (h: Harness, path: string, host: string) =>
  h.request('GET', path, { headers: { host, 'x-forwarded-for': nextAddress() } });

beforeAll(async () => {
  configured = await startAppliance({
    APPLIANCE_TRUSTED_PROXIES: '127.0.0.1',
    APPLIANCE_PUBLIC_ORIGIN: `${PUBLIC}/`,
  });
  plain = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.0.1' });
});

afterAll(async () => {
  await configured?.close();
  await plain?.close();
});

describe('with APPLIANCE_PUBLIC_ORIGIN set', () => {
  it('the discovery documents name the public origin, whatever the Host header says', async () => {
    const as = await get(configured, '/.well-known/oauth-authorization-server', HOSTILE_HOST);
    expect(as.status).toBe(200);
    expect(as.body.issuer).toBe(PUBLIC);
    for (const [key, value] of Object.entries(as.body)) {
      if (typeof value === 'string' && /^https?:/.test(value))
        expect(value.startsWith(`${PUBLIC}/`) || value === PUBLIC, key).toBe(true);
    }
    expect(JSON.stringify(as.body)).not.toContain(HOSTILE_HOST);
    const pr = await get(configured, '/.well-known/oauth-protected-resource', HOSTILE_HOST);
    expect(pr.status).toBe(200);
    expect(pr.body.resource).toBe(PUBLIC);
    expect(JSON.stringify(pr.body)).not.toContain(HOSTILE_HOST);
  });

  it('the device flow verification URIs use the public origin', async () => {
    const res = await configured.request('POST', '/api/oauth/device/authorize', {
      body: { client_name: 'cli' },
      headers: { host: HOSTILE_HOST, 'x-forwarded-for': nextAddress() },
    });
    expect(res.status).toBe(200);
    expect(res.body.verification_uri).toBe(`${PUBLIC}/auth/device`);
    expect(res.body.verification_uri_complete).toBe(
      `${PUBLIC}/auth/device?user_code=${res.body.user_code}`,
    );
  });

  it('WWW-Authenticate points at the public origin (no token, and an invalid token)', async () => {
    const none = await get(configured, '/api/me', HOSTILE_HOST);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource"`,
    );
    const bad = await configured.request('GET', '/api/me', {
      token: 'not-a-token',
      headers: { host: HOSTILE_HOST },
    });
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toBe(
      `Bearer error="invalid_token", resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource"`,
    );
  });
});

describe('without it (the Host header is trusted as received)', () => {
  it('the documents and WWW-Authenticate follow the Host header', async () => {
    const as = await get(plain, '/.well-known/oauth-authorization-server', 'nms.local:9443');
    expect(as.body.issuer).toBe('https://nms.local:9443');
    const none = await get(plain, '/api/me', 'nms.local:9443');
    expect(none.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="https://nms.local:9443/.well-known/oauth-protected-resource"',
    );
  });
});
