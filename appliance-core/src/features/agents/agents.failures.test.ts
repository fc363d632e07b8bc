/**
 * The agent routes' internal-failure answers (spec part 2 "Agent administration"): 500
 * `{error: 'Failed to create token'}`, `{error: 'Enrollment failed'}`, `{error: 'Check-in failed'}`
 * and `{error: 'Adoption failed'}`, forced by renaming the table each one needs on a real appliance
 * (SQLite then fails the statement), with the request otherwise valid (signed, rate limit free,
 * adoption exchange answered by a protocol peer). Nothing of the failure's text reaches the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPeer, freeUdpPort } from '../../../../test/harness/agent-peer.js';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';

let h: Harness;
let admin: string;
let udpPort: number;
const peers: AgentPeer[] = [];
const peer = (n: number) => {
  const p = new AgentPeer(h.url, `127.0.77.${n}`, `failing-agent-${n}`);
  peers.push(p);
  return p;
};

beforeAll(async () => {
  udpPort = await freeUdpPort();
  h = await startAppliance({
    APPLIANCE_AGENT_UDP_PORT: String(udpPort),
    APPLIANCE_BIND: '127.0.0.1',
  });
  admin = await h.login();
});
afterAll(async () => {
  for (const p of peers) await p.close();
  await h?.close();
});

const renamed = async (table: string, run: () => Promise<void>) => {
  h.appliance.db.exec(`ALTER TABLE ${table} RENAME TO ${table}_away`);
  try {
    await run();
  } finally {
    h.appliance.db.exec(`ALTER TABLE ${table}_away RENAME TO ${table}`);
  }
};

describe('agent routes: internal failures', () => {
  it('token creation and enrollment answer 500 with their own messages when the token store fails', async () => {
    const created = await h.request('POST', '/api/agent-tokens', {
      token: admin,
      body: { label: 'x' },
    });
    expect(created.status).toBe(201);
    const token = (created.body as { token: string }).token;
    await renamed('agent_enrollment_tokens', async () => {
      const create = await h.request('POST', '/api/agent-tokens', {
        token: admin,
        body: { label: 'y' },
      });
      expect([create.status, create.body]).toEqual([500, { error: 'Failed to create token' }]);
      const enroll = await peer(2).enroll(token);
      expect([enroll.status, enroll.body]).toEqual([500, { error: 'Enrollment failed' }]);
    });
    // The store back: the token was not consumed by the failed enrollment.
    const enroll = await peer(3).enroll(token);
    expect(enroll.status, enroll.text).toBe(200);
  });

  it('a check-in answers 500 Check-in failed when the agent store fails', async () => {
    await renamed('agents', async () => {
      const res = await peer(4).checkin();
      expect([res.status, res.body]).toEqual([500, { error: 'Check-in failed' }]);
    });
  });

  it('an adoption answers 500 Adoption failed when the host answered but the agent store fails', async () => {
    const p = peer(5);
    p.adoptionKey = 'failing-adoption-key-1';
    await p.listen(udpPort);
    await renamed('agents', async () => {
      const res = await h.request('POST', '/api/agent/adopt-by-token', {
        token: admin,
        body: { ip_address: p.address, token: p.adoptionKey },
      });
      expect([res.status, res.body]).toEqual([500, { error: 'Adoption failed' }]);
    });
    // One transaction: no device is left behind by the failed adoption.
    expect(
      h.appliance.db
        .prepare('SELECT count(*) FROM devices WHERE ip_address = ?')
        .pluck()
        .get(p.address),
    ).toBe(0);
  });
});
