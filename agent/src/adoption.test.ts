import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { fakeAppliance } from '../test/fake-appliance.js';
import { Adoption } from './adoption.js';
import { encodeHmac, encodeSigned, Kind, parseDatagram, verifyHmac } from './datagram.js';
import { b64u, sha256 } from './keys.js';
import { AgentState } from './state.js';

const work = mkdtempSync(path.join(tmpdir(), 'agent-adopt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const adoptionKey = 'Adopt_me-0123456789';

function setup() {
  const state = new AgentState(mkdtempSync(path.join(work, 'state-')));
  state.setAdoptionKey(adoptionKey);
  const adoption = new Adoption(state, () => ({
    agent_uuid: state.agentUuid,
    hostname: 'host-a',
    agent_version: '1.0.0',
    os_version: 'Linux',
    arch: 'amd64',
    public_key: 'agent-public-key',
  }));
  return { state, adoption };
}

function hello(serverId: string, key = adoptionKey, fields: Record<string, unknown> = {}) {
  const now = Date.now();
  const nonce = b64u(randomBytes(16));
  return {
    nonce,
    bytes: encodeHmac(
      Kind.adoptHello,
      { server_id: serverId, nonce, iat: now, exp: now + 10_000, ...fields },
      sha256(key),
    ),
  };
}

describe('adoption exchange (§6)', () => {
  const appliance = fakeAppliance();

  it('hello, reply, push, ack: stores the bundle and deletes the adoption key', () => {
    const { state, adoption } = setup();
    const h = hello(appliance.serverId);
    const reply = adoption.handle(h.bytes);
    expect(reply.kind).toBe('reply');
    const replyFrame = parseDatagram((reply as { bytes: Buffer }).bytes);
    expect(replyFrame?.kind).toBe(Kind.adoptReply);
    expect(verifyHmac(replyFrame!, sha256(adoptionKey))).toBe(true);
    expect(replyFrame?.payload).toMatchObject({
      nonce: h.nonce,
      agent_uuid: state.agentUuid,
      hostname: 'host-a',
      public_key: 'agent-public-key',
    });

    const bundle = appliance.bundle({ device_id: 12 });
    const push = encodeSigned(Kind.bundlePush, { nonce: h.nonce, bundle }, appliance.privateKey);
    const adopted = adoption.handle(push);
    expect(adopted.kind).toBe('adopted');
    const ack = parseDatagram((adopted as { bytes: Buffer }).bytes);
    expect(ack?.kind).toBe(Kind.bundleAck);
    expect(ack?.payload).toEqual({ nonce: h.nonce, agent_uuid: state.agentUuid });
    expect(state.bundle()).toEqual(bundle);
    expect(state.adoptionKey()).toBeNull();
    // The appliance retrying the same push after a lost ack gets the same ack, nothing changes.
    expect(adoption.handle(push)).toEqual({
      kind: 'ack-again',
      bytes: (adopted as { bytes: Buffer }).bytes,
    });
  });

  it('drops a hello under a wrong key, an expired hello, and one naming another appliance once enrolled', () => {
    const { state, adoption } = setup();
    expect(adoption.handle(hello(appliance.serverId, 'Wrong_key-0123456789').bytes)).toEqual({
      kind: 'drop',
      reason: 'hmac',
    });
    const now = Date.now();
    expect(
      adoption.handle(
        hello(appliance.serverId, adoptionKey, { iat: now - 60_000, exp: now - 40_000 }).bytes,
      ),
    ).toEqual({ kind: 'drop', reason: 'window' });
    expect(
      adoption.handle(hello(appliance.serverId, adoptionKey, { exp: now + 31_000 }).bytes),
    ).toEqual({ kind: 'drop', reason: 'validity' });
    state.storeBundle(fakeAppliance().bundle());
    expect(adoption.handle(hello(appliance.serverId).bytes)).toEqual({
      kind: 'drop',
      reason: 'enrolled with another appliance',
    });
  });

  it("drops a push without its hello, signed by another key, or whose key is not the hello's server_id", () => {
    const { state, adoption } = setup();
    const h = hello(appliance.serverId);
    adoption.handle(h.bytes);
    const other = fakeAppliance();
    // Signed by another appliance, with its own (consistent) bundle: server_id differs from the hello's.
    expect(
      adoption.handle(
        encodeSigned(Kind.bundlePush, { nonce: h.nonce, bundle: other.bundle() }, other.privateKey),
      ),
    ).toEqual({ kind: 'drop', reason: 'bundle' });
    // This appliance's bundle signed by another key.
    expect(
      adoption.handle(
        encodeSigned(
          Kind.bundlePush,
          { nonce: h.nonce, bundle: appliance.bundle() },
          other.privateKey,
        ),
      ),
    ).toEqual({ kind: 'drop', reason: 'signature' });
    // No hello with this nonce.
    expect(
      adoption.handle(
        encodeSigned(
          Kind.bundlePush,
          { nonce: b64u(randomBytes(16)), bundle: appliance.bundle() },
          appliance.privateKey,
        ),
      ),
    ).toEqual({ kind: 'drop', reason: 'no hello with this nonce' });
    expect(state.bundle()).toBeNull();
    expect(state.adoptionKey()).toBe(adoptionKey);
  });

  it('without an adoption key nothing answers', () => {
    const { state, adoption } = setup();
    state.deleteAdoptionKey();
    expect(adoption.handle(hello(appliance.serverId).bytes)).toEqual({
      kind: 'drop',
      reason: 'no adoption key',
    });
  });
});
