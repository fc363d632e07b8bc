/**
 * Verification of appliance requests (kind 1, docs/agent-protocol.md §4). A request is accepted
 * only when every check holds; otherwise it is dropped silently. `reason` exists for the agent's
 * debug log and the tests; it never travels back to the sender.
 */
import { isIP } from 'node:net';

import { parseDatagram, verifySigned, Kind } from './datagram.js';
import { fromB64u, publicKeyFromB64u } from './keys.js';
import type { KeyBundle } from './state.js';

export const CLOCK_SKEW_MS = 30_000;
export const MAX_VALIDITY_MS = 60_000;
export const REPLAY_CACHE_SIZE = 10_000;

export interface AgentRequest {
  server_id: string;
  agent_uuid: string;
  request_id: string;
  op: string;
  args: Record<string, unknown>;
  iat: number;
  exp: number;
}

/** request_id values seen, each kept until its exp + 30 s; bounded to 10,000 entries. */
export class ReplayCache {
  private readonly seen = new Map<string, number>();

  constructor(private readonly limit = REPLAY_CACHE_SIZE) {}

  /** Records the id; false when it was seen (a replay) or the cache is full of live entries. */
  admit(id: string, keepUntil: number, now: number): boolean {
    if (this.seen.has(id)) return false;
    if (this.seen.size >= this.limit) {
      for (const [key, until] of this.seen) if (until < now) this.seen.delete(key);
      // Still full of live ids: refuse rather than forget one (forgetting would allow its replay).
      if (this.seen.size >= this.limit) return false;
    }
    this.seen.set(id, keepUntil);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}

/** Compares addresses as IPs (an IPv4-mapped IPv6 source matches its IPv4 form). */
export function sameAddress(a: string, b: string): boolean {
  const strip = (ip: string) =>
    ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return strip(a).toLowerCase() === strip(b).toLowerCase();
}

export type VerifyResult = { ok: true; request: AgentRequest } | { ok: false; reason: string };

export function verifyRequest(
  bytes: Buffer,
  source: string,
  context: { bundle: KeyBundle | null; agentUuid: string; cache: ReplayCache; now: number },
): VerifyResult {
  const { bundle, agentUuid, cache, now } = context;
  if (!bundle) return { ok: false, reason: 'not enrolled' };
  const datagram = parseDatagram(bytes);
  if (!datagram || datagram.kind !== Kind.request) return { ok: false, reason: 'malformed' };
  if (
    bundle.allowed_source_ips.length > 0 &&
    !bundle.allowed_source_ips.some((ip) => sameAddress(ip, source))
  )
    return { ok: false, reason: 'source not allowed' };
  const publicKey = publicKeyFromB64u(bundle.public_key);
  if (!publicKey || !verifySigned(datagram, publicKey)) return { ok: false, reason: 'signature' };
  const p = datagram.payload as Partial<Record<keyof AgentRequest, unknown>> | null;
  if (typeof p !== 'object' || p === null || Array.isArray(p))
    return { ok: false, reason: 'payload' };
  if (p.server_id !== bundle.server_id) return { ok: false, reason: 'server_id' };
  if (p.agent_uuid !== agentUuid) return { ok: false, reason: 'agent_uuid' };
  const { iat, exp, request_id, op } = p;
  if (
    typeof iat !== 'number' ||
    typeof exp !== 'number' ||
    !Number.isFinite(iat) ||
    !Number.isFinite(exp)
  )
    return { ok: false, reason: 'times' };
  if (exp - iat < 1 || exp - iat > MAX_VALIDITY_MS) return { ok: false, reason: 'validity' };
  if (now < iat - CLOCK_SKEW_MS || now > exp) return { ok: false, reason: 'window' };
  if (typeof request_id !== 'string' || fromB64u(request_id)?.length !== 16)
    return { ok: false, reason: 'request_id' };
  if (typeof op !== 'string') return { ok: false, reason: 'op' };
  const args = p.args === undefined ? {} : p.args;
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { ok: false, reason: 'args' };
  if (!cache.admit(request_id, exp + CLOCK_SKEW_MS, now)) return { ok: false, reason: 'replay' };
  return {
    ok: true,
    request: {
      server_id: bundle.server_id,
      agent_uuid: agentUuid,
      request_id,
      op,
      args: args as Record<string, unknown>,
      iat,
      exp,
    },
  };
}
