/**
 * The source address of agent requests behind a configured proxy (APPLIANCE_TRUSTED_PROXIES): the
 * forwarded address is the check-in's address and its rate-limit key only when the peer is a
 * trusted proxy (the untrusted case is in agents.channel.test.ts).
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPeer } from '../../../../test/harness/agent-peer.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

let h: Harness;
let proxy: AgentPeer;
beforeAll(async () => {
  h = await startAppliance({ APPLIANCE_TRUSTED_PROXIES: '127.0.70.1' });
  proxy = new AgentPeer(h.url, '127.0.70.1', `agent-${crypto.randomBytes(6).toString('hex')}`);
});
afterAll(async () => {
  await proxy?.close();
  await h?.close();
});

describe('behind a trusted proxy', () => {
  it('takes the forwarded address for the pending row and the rate-limit bucket', async () => {
    const checkin = (forwarded: string) =>
      proxy.post(
        '/api/agent/checkin',
        { agent_uuid: proxy.agentUuid, hostname: proxy.hostname },
        { headers: { 'x-forwarded-for': forwarded } },
      );
    expect((await checkin('127.0.71.5')).status).toBe(202);
    const row = h.appliance.db
      .prepare('SELECT ip_address FROM pending_devices WHERE agent_uuid = ?')
      .get(proxy.agentUuid) as { ip_address: string };
    expect(row.ip_address).toBe('127.0.71.5');
    for (let i = 0; i < 59; i++) expect((await checkin('127.0.71.5')).status).toBe(202);
    expect((await checkin('127.0.71.5')).status).toBe(429);
    // Another forwarded client has its own bucket.
    expect((await checkin('127.0.71.6')).status).toBe(202);
  });
});
