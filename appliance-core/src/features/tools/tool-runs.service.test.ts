/**
 * Tool-run limits: the slot counter itself, then through a real appliance (2 runs per user, 3 in
 * all) with real ping streams to 127.0.0.1: the N+1th run is refused with 429 and Retry-After,
 * a client that goes away frees its slot, and a blocking tool counts like a stream.
 */
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import type { ToolsEngine } from './index.js';
import { ToolRunSlots } from './tool-runs.service.js';

describe('ToolRunSlots', () => {
  it('counts per user and in all; a release counts once', () => {
    const slots = new ToolRunSlots({ perUser: 2, total: 3 });
    const a1 = slots.acquire(1);
    const a2 = slots.acquire(1);
    expect(slots.acquire(1)).toEqual({ refused: 'user' });
    const b1 = slots.acquire(2);
    expect(slots.acquire(2)).toEqual({ refused: 'total' });
    expect(slots.count()).toBe(3);
    expect(slots.count(1)).toBe(2);
    if (!('release' in a1) || !('release' in a2) || !('release' in b1)) throw new Error('refused');
    a1.release();
    a1.release();
    expect(slots.count()).toBe(2);
    expect(slots.count(1)).toBe(1);
    expect('release' in slots.acquire(2)).toBe(true);
    expect(slots.acquire(3)).toEqual({ refused: 'total' });
    a2.release();
    b1.release();
    expect(slots.count(1)).toBe(0);
  });
});

interface OpenStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Promise<string>;
  close: () => void;
}

describe.runIf(havePeer('ping', 'iputils-ping'))('tool-run limits through the API', () => {
  let h: Harness;
  let port: number;
  let alice: string;
  let bob: string;
  let slots: ToolRunSlots;
  const open: OpenStream[] = [];

  /** Opens an event stream and resolves once its status line and headers have arrived. */
  const stream = (path: string, token: string) =>
    new Promise<OpenStream>((resolve, reject) => {
      const request = https.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'GET',
          rejectUnauthorized: false,
          headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
        },
        (res) => {
          res.setEncoding('utf8');
          let text = '';
          const body = new Promise<string>((done) => {
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => done(text));
            res.on('close', () => done(text));
          });
          const handle = {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            close: () => request.destroy(),
          };
          open.push(handle);
          resolve(handle);
        },
      );
      request.on('error', (err) => {
        if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
      });
      request.end();
    });
  const waitFor = async (what: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!what()) {
      if (Date.now() > deadline) throw new Error('condition not reached within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const REFUSED_USER = {
    status: false,
    message:
      'You have 2 tool runs under way, the most one user may have at once; try again when one has finished',
  };
  const REFUSED_TOTAL = {
    status: false,
    message: 'The appliance is running 3 tools at once, its limit; try again shortly',
  };

  beforeAll(async () => {
    h = await startAppliance({
      APPLIANCE_TOOL_RUNS_PER_USER: '2',
      APPLIANCE_TOOL_RUNS_TOTAL: '3',
    });
    port = Number(new URL(h.url).port);
    const engine = h.appliance.engines.find((e) => e.name === 'tools') as ToolsEngine;
    // One reply a second for 10 probes: each stream stays open about 9 s.
    engine.service.configure({ reverseDns: null, pingIntervalSeconds: 1 });
    slots = engine.service.runs;
    alice = (await h.userWith(['tools'])).token;
    bob = (await h.userWith(['tools'])).token;
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await h?.close();
  });

  it('open N streams, the N+1th is refused with 429 and Retry-After; close one, the next is accepted', async () => {
    const first = await stream('/api/SSEgetPingInfo/127.0.0.1', alice);
    const second = await stream('/api/SSEgetPingInfo/127.0.0.1', alice);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(slots.count()).toBe(2);

    const third = await stream('/api/SSEgetPingInfo/127.0.0.1', alice);
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('10');
    expect(JSON.parse(await third.body)).toEqual(REFUSED_USER);
    // A blocking tool counts like a stream, in its own failure family.
    const blocking = await h.request('POST', '/api/getPingInfo/127.0.0.1', { token: alice });
    expect(blocking.status).toBe(429);
    expect(blocking.headers['retry-after']).toBe('10');
    expect(blocking.body).toEqual(REFUSED_USER);
    const mtr = await stream('/api/SSEgetMTRInfo/127.0.0.1', alice);
    expect(mtr.status).toBe(429);

    // Another user has their own allowance, within the appliance's.
    const bobs = await stream('/api/SSEgetPingInfo/127.0.0.1', bob);
    expect(bobs.status).toBe(200);
    const overall = await stream('/api/SSEgetPingInfo/127.0.0.1', bob);
    expect(overall.status).toBe(429);
    expect(JSON.parse(await overall.body)).toEqual(REFUSED_TOTAL);
    const whois = await h.request('GET', '/api/tools/whois/127.0.0.1', { token: bob });
    expect(whois.status).toBe(429);
    expect(whois.body).toEqual(REFUSED_TOTAL);
    expect(slots.count()).toBe(3);

    // The client goes away: its slot comes back, and the next run is accepted.
    first.close();
    await waitFor(() => slots.count() === 2);
    const again = await stream('/api/SSEgetPingInfo/127.0.0.1', alice);
    expect(again.status).toBe(200);
    expect(slots.count()).toBe(3);

    for (const s of [second, bobs, again]) s.close();
    await waitFor(() => slots.count() === 0);
  });

  it('a stream that ends by itself gives its slot back; refused and invalid requests hold none', async () => {
    const invalid = await stream('/api/SSEgetPingInfo/-oops', alice);
    expect(invalid.status).toBe(200);
    expect(await invalid.body).toContain('event: error');
    await waitFor(() => slots.count() === 0);
    const denied = await h.request('GET', '/api/SSEgetPingInfo/127.0.0.1', {
      token: (await h.userWith(['devices'])).token,
    });
    expect(denied.status).toBe(401);
    expect(slots.count()).toBe(0);
  });
});
