/**
 * A real appliance for HTTP-level tests: a fresh temporary data dir, HTTPS on a free loopback
 * port, and a small client that speaks to it the way any API client would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { Agent, request as undiciRequest } from 'undici';
import { buildApp, type Appliance } from '../../appliance-core/src/app.js';
import { loadConfig } from '../../appliance-core/src/platform/config/config.js';
import { ManualClock } from './clock.js';

export const ADMIN_PASSWORD = 'Admin-Passw0rd';

export interface Response<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body with its own content type (bypasses JSON encoding). */
  raw?: { contentType: string; data: string };
  headers?: Record<string, string>;
  cookie?: string;
}

export interface Harness {
  url: string;
  dataDir: string;
  appliance: Appliance;
  clock: ManualClock;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>;
  /** Signs in and returns the access token. */
  login(login?: string, password?: string): Promise<string>;
  /** Creates a user with the given permissions (and tag slugs) and returns a token for it. */
  userWith(
    permissions: string[],
    options?: { tags?: string[]; username?: string },
  ): Promise<{ id: number; token: string; username: string; password: string }>;
  close(): Promise<void>;
}

const agent = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 1000 });

export async function startAppliance(
  env: Record<string, string> = {},
  options: { logger?: Logger } = {},
): Promise<Harness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'appliance-test-'));
  const config = loadConfig({
    APPLIANCE_DATA_DIR: dataDir,
    APPLIANCE_BIND: '127.0.0.1',
    APPLIANCE_HTTPS_PORT: '0',
    APPLIANCE_SYSLOG_PORT: '0',
    APPLIANCE_NETFLOW_PORT: '0',
    APPLIANCE_ADMIN_PASSWORD: ADMIN_PASSWORD,
    APPLIANCE_LOG_LEVEL: 'silent',
    ...env,
  });
  const clock = new ManualClock();
  const appliance = await buildApp(config, {
    clock,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  await appliance.start();
  await appliance.app.listen({ host: '127.0.0.1', port: 0 });
  const address = appliance.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `https://127.0.0.1:${port}`;
  let userCounter = 0;

  const request = async <T = any>(
    method: string,
    urlPath: string,
    options: RequestOptions = {},
  ): Promise<Response<T>> => {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.cookie) headers.cookie = options.cookie;
    let body: string | undefined;
    if (options.raw) {
      headers['content-type'] = options.raw.contentType;
      body = options.raw.data;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await undiciRequest(`${url}${urlPath}`, {
      method: method as never,
      headers,
      body,
      dispatcher: agent,
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    if (String(res.headers['content-type'] ?? '').includes('json') && text !== '')
      parsed = JSON.parse(text);
    return { status: res.statusCode, headers: res.headers, body: parsed as T, text };
  };

  const login = async (loginName = 'admin', password = ADMIN_PASSWORD) => {
    const res = await request('POST', '/api/login', { body: { email: loginName, password } });
    if (!res.body?.access_token) throw new Error(`login failed: ${res.text}`);
    return res.body.access_token as string;
  };

  let adminToken: string | undefined;
  const userWith: Harness['userWith'] = async (permissions, options = {}) => {
    adminToken ??= await login();
    userCounter++;
    const username = options.username ?? `user${userCounter}`;
    const password = `Passw0rd-${userCounter}`;
    const created = await request('POST', '/api/createUser', {
      token: adminToken,
      body: {
        first_name: 'Test',
        last_name: `User ${userCounter}`,
        email: `${username}@example.test`,
        username,
        password,
      },
    });
    if (created.body?.status !== 201) throw new Error(`createUser failed: ${created.text}`);
    const id = (
      appliance.db.prepare('SELECT id FROM users WHERE username = ?').get(username) as {
        id: number;
      }
    ).id;
    const tags = options.tags?.map((value) => ({ value }));
    const saved = await request('POST', '/api/saveUser', {
      token: adminToken,
      body: { user: id, permissions, ...(tags ? { tags } : {}) },
    });
    if (saved.body?.status !== 201) throw new Error(`saveUser failed: ${saved.text}`);
    return { id, token: await login(username, password), username, password };
  };

  return {
    url,
    dataDir,
    appliance,
    clock,
    request,
    login,
    userWith,
    async close() {
      await appliance.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
