/**
 * The agent's half of the adoption exchange (docs/agent-protocol.md §6): adopt-hello (kind 2,
 * HMAC under sha256(adoption key)) is answered with adopt-reply (kind 3); bundle-push (kind 4,
 * signed by the appliance key, carrying the hello's nonce) is stored, the adoption key deleted,
 * and bundle-ack (kind 5) sent. The appliance key is vouched for by the HMAC-authenticated hello:
 * its `server_id` must be the hash of the pushed bundle's `public_key`.
 *
 * One push is accepted per hello; a repeated push with the same nonce (the appliance retrying
 * after a lost ack) is answered with the same ack and changes nothing.
 */
import {
  encodeHmac,
  Kind,
  parseDatagram,
  verifyHmac,
  verifySigned,
  type Datagram,
} from './datagram.js';
import { fromB64u, publicKeyFromB64u, sha256 } from './keys.js';
import { parseBundle, type AgentState, type KeyBundle } from './state.js';
import { CLOCK_SKEW_MS } from './verify.js';

export const MAX_HELLO_VALIDITY_MS = 30_000;
const MAX_PENDING = 64;

export interface Identity {
  agent_uuid: string;
  hostname: string;
  agent_version: string;
  os_version: string;
  arch: string;
  public_key: string;
}

interface Pending {
  serverId: string;
  key: Buffer;
  keepUntil: number;
  ack: Buffer | null;
}

export type AdoptionOutcome =
  | { kind: 'reply'; bytes: Buffer }
  | { kind: 'adopted'; bytes: Buffer; bundle: KeyBundle }
  | { kind: 'ack-again'; bytes: Buffer }
  | { kind: 'drop'; reason: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class Adoption {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly state: AgentState,
    private readonly identity: () => Identity,
  ) {}

  handle(bytes: Buffer, now = Date.now()): AdoptionOutcome {
    const datagram = parseDatagram(bytes);
    if (!datagram) return { kind: 'drop', reason: 'malformed' };
    for (const [nonce, entry] of this.pending)
      if (entry.keepUntil < now) this.pending.delete(nonce);
    if (datagram.kind === Kind.adoptHello) return this.hello(datagram, now);
    if (datagram.kind === Kind.bundlePush) return this.push(datagram);
    return { kind: 'drop', reason: 'kind' };
  }

  private hello(datagram: Datagram, now: number): AdoptionOutcome {
    const adoptionKey = this.state.adoptionKey();
    if (!adoptionKey) return { kind: 'drop', reason: 'no adoption key' };
    const key = sha256(adoptionKey);
    if (!verifyHmac(datagram, key)) return { kind: 'drop', reason: 'hmac' };
    const p = datagram.payload;
    if (!isRecord(p)) return { kind: 'drop', reason: 'payload' };
    const { server_id, nonce, iat, exp } = p;
    if (typeof server_id !== 'string' || !/^[0-9a-f]{32}$/.test(server_id))
      return { kind: 'drop', reason: 'server_id' };
    if (typeof nonce !== 'string' || fromB64u(nonce)?.length !== 16)
      return { kind: 'drop', reason: 'nonce' };
    if (typeof iat !== 'number' || typeof exp !== 'number')
      return { kind: 'drop', reason: 'times' };
    if (exp <= iat || exp - iat > MAX_HELLO_VALIDITY_MS)
      return { kind: 'drop', reason: 'validity' };
    if (now < iat - CLOCK_SKEW_MS || now > exp) return { kind: 'drop', reason: 'window' };
    const current = this.state.bundle();
    if (current && current.server_id !== server_id)
      return { kind: 'drop', reason: 'enrolled with another appliance' };
    const known = this.pending.get(nonce);
    if (!known) {
      if (this.pending.size >= MAX_PENDING) return { kind: 'drop', reason: 'busy' };
      this.pending.set(nonce, {
        serverId: server_id,
        key,
        keepUntil: exp + CLOCK_SKEW_MS,
        ack: null,
      });
    }
    return {
      kind: 'reply',
      bytes: encodeHmac(Kind.adoptReply, { nonce, ...this.identity() }, key),
    };
  }

  private push(datagram: Datagram): AdoptionOutcome {
    const p = datagram.payload;
    if (!isRecord(p) || typeof p.nonce !== 'string') return { kind: 'drop', reason: 'payload' };
    const entry = this.pending.get(p.nonce);
    if (!entry) return { kind: 'drop', reason: 'no hello with this nonce' };
    const bundle = parseBundle(p.bundle);
    if (!bundle || bundle.server_id !== entry.serverId) return { kind: 'drop', reason: 'bundle' };
    const publicKey = publicKeyFromB64u(bundle.public_key);
    if (!publicKey || !verifySigned(datagram, publicKey))
      return { kind: 'drop', reason: 'signature' };
    if (entry.ack) return { kind: 'ack-again', bytes: entry.ack };
    if (!this.state.storeBundle(bundle))
      return { kind: 'drop', reason: 'enrolled with another appliance' };
    this.state.deleteAdoptionKey();
    entry.ack = encodeHmac(
      Kind.bundleAck,
      { nonce: p.nonce, agent_uuid: this.identity().agent_uuid },
      entry.key,
    );
    return { kind: 'adopted', bytes: entry.ack, bundle };
  }
}
