import { describe, expect, it } from 'vitest';

import { fakeAppliance } from '../test/fake-appliance.js';
import { ReplayCache, verifyRequest } from './verify.js';

const agentUuid = 'agent-0001';

function context(bundle = fakeAppliance().bundle(), cache = new ReplayCache()) {
  return { bundle, agentUuid, cache, now: Date.now() };
}

describe('verification of appliance requests (kind 1)', () => {
  const appliance = fakeAppliance();
  const bundle = appliance.bundle();

  it('accepts a fresh request signed by its appliance, once', () => {
    const { bytes } = appliance.request({ agent_uuid: agentUuid, op: 'processes' });
    const ctx = context(bundle);
    const first = verifyRequest(bytes, '127.0.0.1', ctx);
    expect(first).toMatchObject({ ok: true, request: { op: 'processes', agent_uuid: agentUuid } });
    // The same datagram again is a replay.
    expect(verifyRequest(bytes, '127.0.0.1', ctx)).toEqual({ ok: false, reason: 'replay' });
  });

  it('refuses a request with any flipped byte', () => {
    const { bytes } = appliance.request({ agent_uuid: agentUuid });
    for (let i = 0; i < bytes.length; i++) {
      const tampered = Buffer.from(bytes);
      tampered[i] = (tampered[i] ?? 0) ^ 0x01;
      expect(verifyRequest(tampered, '127.0.0.1', context(bundle)).ok, `byte ${i}`).toBe(false);
    }
  });

  it('refuses one past its validity window, one too long, and one from the future', () => {
    const now = Date.now();
    const expired = appliance.request({ agent_uuid: agentUuid, iat: now - 40_000, exp: now - 1 });
    expect(verifyRequest(expired.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'window',
    });
    const tooLong = appliance.request({ agent_uuid: agentUuid, iat: now, exp: now + 60_001 });
    expect(verifyRequest(tooLong.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'validity',
    });
    const future = appliance.request({
      agent_uuid: agentUuid,
      iat: now + 31_000,
      exp: now + 60_000,
    });
    expect(verifyRequest(future.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'window',
    });
    const skewed = appliance.request({
      agent_uuid: agentUuid,
      iat: now + 29_000,
      exp: now + 59_000,
    });
    expect(verifyRequest(skewed.bytes, '127.0.0.1', context(bundle)).ok).toBe(true);
  });

  it("refuses one signed by another appliance's key, even naming this server_id", () => {
    const other = fakeAppliance();
    const forged = other.request({ agent_uuid: agentUuid, server_id: appliance.serverId });
    expect(verifyRequest(forged.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'signature',
    });
    const own = other.request({ agent_uuid: agentUuid });
    expect(verifyRequest(own.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'signature',
    });
  });

  it('refuses a wrong server_id, a wrong agent_uuid and a wrong source address', () => {
    const wrongServer = appliance.request({ agent_uuid: agentUuid, server_id: '0'.repeat(32) });
    expect(verifyRequest(wrongServer.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'server_id',
    });
    const wrongAgent = appliance.request({ agent_uuid: 'someone-else' });
    expect(verifyRequest(wrongAgent.bytes, '127.0.0.1', context(bundle))).toEqual({
      ok: false,
      reason: 'agent_uuid',
    });
    const good = appliance.request({ agent_uuid: agentUuid });
    expect(verifyRequest(good.bytes, '127.0.0.2', context(bundle))).toEqual({
      ok: false,
      reason: 'source not allowed',
    });
    expect(verifyRequest(good.bytes, '::ffff:127.0.0.1', context(bundle)).ok).toBe(true);
  });

  it('refuses everything before enrollment, and malformed frames', () => {
    const { bytes } = appliance.request({ agent_uuid: agentUuid });
    expect(verifyRequest(bytes, '127.0.0.1', { ...context(bundle), bundle: null }).ok).toBe(false);
    expect(
      verifyRequest(bytes.subarray(0, bytes.length - 1), '127.0.0.1', context(bundle)),
    ).toEqual({ ok: false, reason: 'malformed' });
    expect(
      verifyRequest(Buffer.concat([bytes, Buffer.from([0])]), '127.0.0.1', context(bundle)),
    ).toEqual({ ok: false, reason: 'malformed' });
  });

  it('the replay cache is bounded and refuses rather than forgets a live id', () => {
    const cache = new ReplayCache(2);
    const now = 1000;
    expect(cache.admit('a', now + 10, now)).toBe(true);
    expect(cache.admit('b', now + 10, now)).toBe(true);
    expect(cache.admit('c', now + 10, now)).toBe(false);
    expect(cache.admit('c', now + 10, now + 11)).toBe(true); // a and b expired and were swept
    expect(cache.size).toBe(1);
  });
});
