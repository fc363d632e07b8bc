import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { fakeAppliance } from '../test/fake-appliance.js';
import { loadOrCreateAgentKey } from './keys.js';
import { AgentState, parseBundle } from './state.js';

const work = mkdtempSync(path.join(tmpdir(), 'agent-state-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('agent state (§1, §2)', () => {
  it('keeps its uuid and key across restarts; the private key file is 0600', () => {
    const dir = path.join(work, 'a');
    const first = new AgentState(dir);
    const key = loadOrCreateAgentKey(dir);
    expect(new AgentState(dir).agentUuid).toBe(first.agentUuid);
    expect(loadOrCreateAgentKey(dir).publicB64u).toBe(key.publicB64u);
    expect(statSync(path.join(dir, 'agent-key.pem')).mode & 0o777).toBe(0o600);
  });

  it('refuses a bundle naming another appliance unless re-enrolled', () => {
    const state = new AgentState(path.join(work, 'b'));
    const one = fakeAppliance();
    const two = fakeAppliance();
    expect(state.storeBundle(one.bundle())).toBe(true);
    expect(state.storeBundle(one.bundle({ device_id: 9 }))).toBe(true);
    expect(state.storeBundle(two.bundle())).toBe(false);
    expect(state.bundle()?.server_id).toBe(one.serverId);
    expect(state.storeBundle(two.bundle(), true)).toBe(true);
    expect(state.bundle()?.server_id).toBe(two.serverId);
  });

  it('refuses a bundle whose server_id is not the hash of its public key, or not https', () => {
    const one = fakeAppliance();
    const two = fakeAppliance();
    expect(parseBundle(one.bundle())).not.toBeNull();
    expect(parseBundle({ ...one.bundle(), public_key: two.publicB64u })).toBeNull();
    expect(parseBundle({ ...one.bundle(), server_url: 'http://127.0.0.1' })).toBeNull();
    expect(parseBundle({ ...one.bundle(), allowed_source_ips: '127.0.0.1' })).toBeNull();
  });
});
