/**
 * The root-helper client against a fake helper on a real Unix socket: one JSON line each way,
 * answers parsed strictly, an unreachable or silent helper reported as unavailable, and no value
 * able to add a line to the request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RootHelperClient, RootHelperUnavailableError, parseAnswer } from './root-helper.client.js';
import { startFakeRootHelper, type FakeRootHelper } from './testing/fake-root-helper.js';

let helper: FakeRootHelper;
beforeEach(async () => {
  helper = await startFakeRootHelper();
});
afterEach(async () => {
  await helper.close();
});

describe('RootHelperClient', () => {
  it('sends one JSON line and resolves with the answer', async () => {
    helper.answer = () => ({ ok: true, output: { hostname: 'x' } });
    const client = new RootHelperClient({ socketPath: helper.socketPath });
    const answer = await client.call({ v: 1, op: 'hostname.set', args: { hostname: 'nms-1' } });
    expect(answer).toEqual({ ok: true, output: { hostname: 'x' } });
    expect(helper.requests).toEqual([{ v: 1, op: 'hostname.set', args: { hostname: 'nms-1' } }]);
  });

  it("passes the helper's refusal through as an answer", async () => {
    helper.answer = () => ({ ok: false, code: 'unsupported', message: 'no systemd' });
    const client = new RootHelperClient({ socketPath: helper.socketPath });
    await expect(
      client.call({ v: 1, op: 'service.action', args: { unit: 'a.service', action: 'restart' } }),
    ).resolves.toEqual({ ok: false, code: 'unsupported', message: 'no systemd' });
  });

  it('never lets a value add a line: newlines and NULs travel JSON-escaped on the one line', async () => {
    const client = new RootHelperClient({ socketPath: helper.socketPath });
    await client.call({ v: 1, op: 'ntp.set', args: { servers: ['a\nServer=evil', 'b\u0000c'] } });
    expect(helper.raw).toHaveLength(1);
    expect(helper.raw[0]).not.toContain('\n');
    expect(helper.raw[0]).not.toContain(String.fromCharCode(0));
    expect(helper.requests[0]).toEqual({
      v: 1,
      op: 'ntp.set',
      args: { servers: ['a\nServer=evil', 'b\u0000c'] },
    });
  });

  it('refuses a request over the protocol limit before connecting', async () => {
    const client = new RootHelperClient({ socketPath: helper.socketPath });
    await expect(
      client.call({ v: 1, op: 'ntp.set', args: { servers: ['x'.repeat(70_000)] } }),
    ).rejects.toThrow('too large');
    expect(helper.requests).toHaveLength(0);
  });

  it('reports a missing socket, a helper that hangs up, and one that never answers as unavailable', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'no-helper-'));
    try {
      const missing = new RootHelperClient({ socketPath: path.join(dir, 'none.sock') });
      await expect(missing.call({ v: 1, op: 'network.confirm', args: {} })).rejects.toBeInstanceOf(
        RootHelperUnavailableError,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    helper.answer = () => ({ close: true });
    const client = new RootHelperClient({ socketPath: helper.socketPath, timeoutMs: 300 });
    await expect(client.call({ v: 1, op: 'network.confirm', args: {} })).rejects.toThrow(
      'closed without an answer',
    );
    helper.answer = () => ({ hang: true });
    const started = Date.now();
    await expect(client.call({ v: 1, op: 'network.confirm', args: {} })).rejects.toThrow(
      'did not answer within 300 ms',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('turns an answer of another shape into a failed answer', async () => {
    helper.answer = () => ({ raw: 'not json\n' });
    const client = new RootHelperClient({ socketPath: helper.socketPath });
    await expect(client.call({ v: 1, op: 'network.confirm', args: {} })).resolves.toMatchObject({
      ok: false,
      code: 'failed',
    });
    expect(parseAnswer('{"ok":false,"code":"weird","message":"x"}')).toMatchObject({
      ok: false,
      code: 'failed',
    });
    expect(parseAnswer('{"ok":"yes"}')).toMatchObject({ ok: false });
  });
});
