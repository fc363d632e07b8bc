import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { fakeAppliance } from '../test/fake-appliance.js';
import {
  startHttpsAppliance,
  type HttpsAppliance,
  type Received,
} from '../test/https-appliance.js';
import { Agent, EnrollmentRefused } from './agent.js';
import { parseConfig } from './config.js';

const work = mkdtempSync(path.join(tmpdir(), 'agent-run-'));
const appliance = fakeAppliance();
let https: HttpsAppliance;
const agents: Agent[] = [];
const quiet = () => undefined;

beforeAll(async () => {
  https = await startHttpsAppliance(() => ({ status: 500 }));
});
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
});
afterAll(async () => {
  await https.close();
  rmSync(work, { recursive: true, force: true });
});

function newAgent(bindAddress: string, extra: string[] = []): Agent {
  const stateDir = mkdtempSync(path.join(work, 'state-'));
  const config = parseConfig([
    '--server',
    https.url,
    '--state-dir',
    stateDir,
    '--udp-port',
    '0',
    '--bind',
    bindAddress,
    '--pin',
    https.fingerprint256,
    ...extra,
  ]);
  const agent = new Agent(config, quiet);
  agents.push(agent);
  return agent;
}

async function waitFor<T>(find: () => T | undefined, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function sendFrom(source: string, port: number, bytes: Buffer, target: string) {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, source, resolve));
  await new Promise<void>((resolve, reject) =>
    socket.send(bytes, port, target, (error) => (error ? reject(error) : resolve())),
  );
  socket.close();
}

describe('agent against an HTTPS peer on loopback', () => {
  it('checks in signed from its --bind address; after a 409 it retries once with override', async () => {
    const agent = newAgent('127.0.0.23');
    const bundle = appliance.bundle({ server_url: https.url, allowed_source_ips: ['127.0.0.1'] });
    https.respond = (req) =>
      req.path === '/api/agent/checkin' && !(req.body as { override?: boolean }).override
        ? { status: 409, body: { error: 'IP address is held by another device' } }
        : { status: 200, body: bundle };
    const start = https.received.length;
    const outcome = await agent.checkin();
    expect(outcome).toEqual({ status: 'adopted', bundle });
    const calls = https.received.slice(start);
    expect(
      calls.map((c) => [
        c.path,
        (c.body as Record<string, unknown>).override,
        c.remoteAddress,
        c.signatureValid,
      ]),
    ).toEqual([
      ['/api/agent/checkin', undefined, '127.0.0.23', true],
      ['/api/agent/checkin', true, '127.0.0.23', true],
    ]);
    expect(calls[0]?.body).toMatchObject({
      agent_uuid: agent.state.agentUuid,
      arch: expect.stringMatching(/^(amd64|arm64)$/),
    });
    expect(agent.state.bundle()).toEqual(bundle);

    // 409 again after the override: no third attempt.
    https.respond = () => ({
      status: 409,
      body: { error: 'IP address is held by another device' },
    });
    const before = https.received.length;
    expect(await agent.checkin()).toEqual({
      status: 'conflict',
      error: 'IP address is held by another device',
    });
    expect(https.received.length - before).toBe(2);
  });

  it('answers a verified UDP request with a signed result: processes include its own pid', async () => {
    const agent = newAgent('127.0.0.24');
    const port = await agent.listen();
    agent.state.storeBundle(
      appliance.bundle({ server_url: https.url, allowed_source_ips: ['127.0.0.1'] }),
    );
    https.respond = () => ({ status: 204 });
    const { bytes, requestId } = appliance.request({
      agent_uuid: agent.state.agentUuid,
      op: 'processes',
    });
    await sendFrom('127.0.0.1', port, bytes, '127.0.0.24');
    const result: Received = await waitFor(() =>
      https.received.find((r) => (r.body as { request_id?: string })?.request_id === requestId),
    );
    expect(result.path).toBe('/api/agent/results');
    expect(result.signatureValid).toBe(true);
    expect(result.remoteAddress).toBe('127.0.0.24');
    const body = result.body as { ok: boolean; data: { pid: number }[]; agent_uuid: string };
    expect(body.ok).toBe(true);
    expect(body.agent_uuid).toBe(agent.state.agentUuid);
    expect(body.data.some((p) => p.pid === process.pid)).toBe(true);

    // The same datagram again is a replay; one from a source not allowed is dropped: no result.
    const count = https.received.length;
    await sendFrom('127.0.0.1', port, bytes, '127.0.0.24');
    const other = appliance.request({ agent_uuid: agent.state.agentUuid, op: 'identify' });
    await sendFrom('127.0.0.2', port, other.bytes, '127.0.0.24');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(https.received.length).toBe(count);
  });

  it('uses paths literally and posts failures as ok: false', async () => {
    const agent = newAgent('127.0.0.25');
    const port = await agent.listen();
    agent.state.storeBundle(appliance.bundle({ server_url: https.url }));
    https.respond = () => ({ status: 204 });
    const dir = path.join(work, '$(id);id -x');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'f'), Buffer.alloc(123));
    const ask = async (op: string, args: Record<string, unknown>) => {
      const { bytes, requestId } = appliance.request({
        agent_uuid: agent.state.agentUuid,
        op,
        args,
      });
      await sendFrom('127.0.0.1', port, bytes, '127.0.0.25');
      return (
        await waitFor(() =>
          https.received.find((r) => (r.body as { request_id?: string })?.request_id === requestId),
        )
      ).body as Record<string, unknown>;
    };
    expect(await ask('folder.usage', { path: dir })).toMatchObject({
      ok: true,
      data: { path: dir, size: 123 },
    });
    expect(await ask('file.delete', { path: `${dir}/f\0/etc/passwd` })).toMatchObject({
      ok: false,
      error: 'path must not contain NUL',
    });
    expect(await ask('folder.delete', { path: '-rf' })).toMatchObject({
      ok: false,
      error: 'path must be absolute',
    });
    expect(await ask('nope', {})).toMatchObject({ ok: false, error: 'unknown op: nope' });
  });

  it('refuses an appliance whose certificate does not match --pin', async () => {
    const agent = newAgent('127.0.0.26', []);
    (agent.config as { pin?: string }).pin = 'ab'.repeat(32);
    await expect(agent.checkin()).rejects.toThrow('certificate fingerprint does not match --pin');
  });

  it('stops on a refused enrollment with the appliance message, and stores the bundle of a good one', async () => {
    const agent = newAgent('127.0.0.27');
    https.respond = () => ({ status: 401, body: { error: 'Token already consumed' } });
    await expect(agent.enroll('t'.repeat(40))).rejects.toThrow(
      new EnrollmentRefused('Token already consumed'),
    );
    const bundle = appliance.bundle({ server_url: https.url });
    https.respond = () => ({ status: 200, body: bundle });
    await agent.enroll('t'.repeat(40));
    expect(agent.state.bundle()).toEqual(bundle);
    const sent = https.received.at(-1)?.body as Record<string, unknown>;
    expect(Object.keys(sent).sort()).toEqual([
      'agent_uuid',
      'agent_version',
      'hostname',
      'os_version',
      'token',
    ]);
    expect(agent.alreadyEnrolledWith('t'.repeat(40))).toBe(true);
  });
});
