/**
 * The appliance's side of the protocol as far as agent tests need it: an appliance key, a key
 * bundle naming it, and signed kind-1 requests. Written from docs/agent-protocol.md, not imported
 * from appliance-core (the agent shares only the specification).
 */
import { createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

import { encodeSigned, Kind } from '../src/datagram.js';
import { b64u, rawPublicKey, sha256hex } from '../src/keys.js';
import type { KeyBundle } from '../src/state.js';

export interface FakeAppliance {
  privateKey: KeyObject;
  publicB64u: string;
  serverId: string;
  bundle(overrides?: Partial<KeyBundle>): KeyBundle;
  request(fields: Record<string, unknown>): { bytes: Buffer; requestId: string };
}

export function fakeAppliance(): FakeAppliance {
  const { privateKey } = generateKeyPairSync('ed25519');
  const raw = rawPublicKey(createPublicKey(privateKey));
  const publicB64u = b64u(raw);
  const serverId = sha256hex(raw).slice(0, 32);
  return {
    privateKey,
    publicB64u,
    serverId,
    bundle: (overrides = {}) => ({
      server_id: serverId,
      server_url: 'https://127.0.0.1:8443',
      public_key: publicB64u,
      allowed_source_ips: ['127.0.0.1'],
      device_id: 7,
      ...overrides,
    }),
    request(fields) {
      const now = Date.now();
      const requestId = b64u(randomBytes(16));
      const payload = {
        server_id: serverId,
        request_id: requestId,
        op: 'identify',
        args: {},
        iat: now,
        exp: now + 30_000,
        ...fields,
      };
      return { bytes: encodeSigned(Kind.request, payload, privateKey), requestId };
    },
  };
}
