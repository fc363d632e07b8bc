/**
 * The appliance's side of the agent channel (docs/agent-protocol.md §4 to §6): one UDP socket per
 * address family, bound to the appliance's address on an ephemeral port. It sends signed requests
 * (kind 1) and keeps each outstanding until its `exp`; the agent answers over HTTPS
 * (POST /api/agent/results), which settles the request here. It also runs the adoption exchange
 * (hello, reply, bundle push, ack), where the agent answers over UDP to this socket.
 */
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../../platform/time/time.js';
import type { AgentKeys } from './agent-keys.service.js';
import {
  adoptionHmacKey,
  b64u,
  decodeDatagram,
  encodeDatagram,
  KIND,
} from './agent-protocol.rules.js';

/** A request's lifetime (`exp - iat`); probe routes wait at most PROBE_WAIT_MS of it. */
export const REQUEST_TTL_MS = 30_000;
export const PROBE_WAIT_MS = 15_000;
const OUTSTANDING_MAX = 10_000;
const ADOPT_STEP_MS = 2_000;
const ADOPT_TRIES = 3;

export type AgentResult = { ok: true; data: unknown } | { ok: false; error: string };

export interface AgentTarget {
  ip: string;
  agentUuid: string;
  /** The agent's registered key: a result is accepted only under it. */
  publicKey: string;
}

interface Outstanding {
  agentUuid: string;
  publicKey: string;
  exp: number;
  settle: ((result: AgentResult) => void) | null;
  timer: NodeJS.Timeout;
}

export interface AdoptReply {
  agent_uuid: string;
  hostname: string;
  agent_version: string;
  os_version: string;
  arch: string;
  public_key: string;
}

interface Waiter {
  ip: string;
  kind: number;
  nonce: string;
  hmacKey: Buffer;
  resolve: (payload: Record<string, unknown> | null) => void;
}

export class AgentChannel {
  readonly name = 'agent-channel';
  private sockets: { udp4: dgram.Socket | null; udp6: dgram.Socket | null } = {
    udp4: null,
    udp6: null,
  };
  private readonly outstanding = new Map<string, Outstanding>();
  private readonly waiters = new Set<Waiter>();
  readonly counters = { sent: 0, results: 0, unanswered: 0, dropped: 0 };

  constructor(
    private readonly opts: {
      keys: AgentKeys;
      clock: Clock;
      port: number;
      /** The appliance's bind address ('0.0.0.0', '::' or a specific one). */
      bind: string;
      log: Logger;
    },
  ) {}

  async start(): Promise<void> {
    const family = net.isIP(this.opts.bind);
    const specific = this.opts.bind !== '0.0.0.0' && this.opts.bind !== '::';
    if (family === 4 || !specific)
      this.sockets.udp4 = await this.open(
        'udp4',
        specific && family === 4 ? this.opts.bind : '0.0.0.0',
      );
    if (family === 6 || !specific)
      this.sockets.udp6 = await this.open(
        'udp6',
        specific && family === 6 ? this.opts.bind : '::',
      ).catch(() => null);
  }

  async stop(): Promise<void> {
    for (const [id, o] of this.outstanding) {
      clearTimeout(o.timer);
      o.settle?.({ ok: false, error: 'Agent did not answer' });
      this.outstanding.delete(id);
    }
    for (const key of ['udp4', 'udp6'] as const) {
      const socket = this.sockets[key];
      this.sockets[key] = null;
      if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
    }
  }

  /** Outstanding requests (for /metrics and tests). */
  outstandingCount(): number {
    return this.outstanding.size;
  }

  private open(type: 'udp4' | 'udp6', address: string): Promise<dgram.Socket> {
    return new Promise((resolve, reject) => {
      const socket = dgram.createSocket({ type, ipv6Only: type === 'udp6' });
      socket.once('error', reject);
      socket.on('message', (msg, rinfo) => this.onDatagram(msg, rinfo.address));
      socket.bind({ address, port: 0 }, () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.opts.log.warn({ err }, 'agent channel socket'));
        socket.unref();
        resolve(socket);
      });
    });
  }

  private socketFor(ip: string): dgram.Socket {
    const socket = net.isIP(ip) === 6 ? this.sockets.udp6 : this.sockets.udp4;
    if (!socket) throw new Error(`the agent channel cannot reach ${ip}`);
    return socket;
  }

  /** Sends one datagram; `failed` runs when the host's stack refuses it (no route, ...). */
  private send(ip: string, datagram: Buffer, failed?: (err: Error) => void): void {
    this.socketFor(ip).send(datagram, this.opts.port, ip, (err) => {
      if (err) failed?.(err);
    });
    this.counters.sent++;
  }

  /**
   * Sends a signed request and resolves with the agent's result, or with `Agent did not answer`
   * after `waitMs` (the request stays outstanding until its `exp`; a later result is accepted
   * and discarded).
   */
  request(
    target: AgentTarget,
    op: string,
    args: Record<string, unknown> = {},
    waitMs = PROBE_WAIT_MS,
  ): Promise<AgentResult> {
    const now = this.opts.clock.now();
    const requestId = b64u(crypto.randomBytes(16));
    const exp = now + REQUEST_TTL_MS;
    const datagram = encodeDatagram(
      KIND.request,
      {
        server_id: this.opts.keys.serverId,
        agent_uuid: target.agentUuid,
        request_id: requestId,
        op,
        args,
        iat: now,
        exp,
      },
      this.opts.keys.signer(),
    );
    if (this.outstanding.size >= OUTSTANDING_MAX)
      return Promise.resolve({ ok: false, error: 'Too many outstanding agent requests' });
    return new Promise<AgentResult>((resolve) => {
      let settled = false;
      const settle = (result: AgentResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(wait);
        resolve(result);
      };
      const wait = setTimeout(
        () => {
          this.counters.unanswered++;
          settle({ ok: false, error: 'Agent did not answer' });
        },
        Math.min(waitMs, REQUEST_TTL_MS),
      );
      const entry: Outstanding = {
        agentUuid: target.agentUuid,
        publicKey: target.publicKey,
        exp,
        settle,
        timer: setTimeout(() => this.outstanding.delete(requestId), REQUEST_TTL_MS),
      };
      entry.timer.unref();
      this.outstanding.set(requestId, entry);
      try {
        this.send(target.ip, datagram);
      } catch (err) {
        this.outstanding.delete(requestId);
        clearTimeout(entry.timer);
        this.opts.log.warn({ err, ip: target.ip }, 'agent request not sent');
        settle({ ok: false, error: 'Agent did not answer' });
      }
    });
  }

  /**
   * Settles an outstanding request with the agent's result (POST /api/agent/results). False when
   * there is none for this agent and key (expired, answered or never sent).
   */
  acceptResult(
    agentUuid: string,
    publicKey: string,
    requestId: string,
    result: AgentResult,
  ): boolean {
    const entry = this.outstanding.get(requestId);
    if (!entry || entry.agentUuid !== agentUuid || entry.publicKey !== publicKey) return false;
    if (entry.exp < this.opts.clock.now()) return false;
    this.outstanding.delete(requestId);
    clearTimeout(entry.timer);
    this.counters.results++;
    entry.settle?.(result);
    return true;
  }

  // --- adoption (§6) --------------------------------------------------------------------------

  private onDatagram(msg: Buffer, from: string): void {
    const address = from.startsWith('::ffff:') ? from.slice(7) : from;
    for (const waiter of this.waiters) {
      if (waiter.ip !== address) continue;
      const decoded = decodeDatagram(msg, { hmacKey: waiter.hmacKey });
      if (!decoded || decoded.kind !== waiter.kind || decoded.payload.nonce !== waiter.nonce)
        continue;
      this.waiters.delete(waiter);
      waiter.resolve(decoded.payload);
      return;
    }
    this.counters.dropped++;
  }

  /** Sends `datagram` up to 3 times, 2 s apart, until an answer of `kind` with `nonce` arrives. */
  private async exchange(
    ip: string,
    datagram: Buffer,
    kind: number,
    nonce: string,
    hmacKey: Buffer,
  ): Promise<Record<string, unknown> | null> {
    for (let attempt = 0; attempt < ADOPT_TRIES; attempt++) {
      let waiter: Waiter | undefined;
      let unreachable = false;
      const answer = new Promise<Record<string, unknown> | null>((resolve) => {
        waiter = { ip, kind, nonce, hmacKey, resolve };
        this.waiters.add(waiter);
        setTimeout(() => resolve(null), ADOPT_STEP_MS).unref();
      });
      try {
        // A datagram the stack refuses (no route to the host) ends the exchange at once.
        this.send(ip, datagram, () => {
          unreachable = true;
          waiter?.resolve(null);
        });
      } catch {
        if (waiter) this.waiters.delete(waiter);
        return null;
      }
      const payload = await answer;
      if (waiter) this.waiters.delete(waiter);
      if (payload) return payload;
      if (unreachable) return null;
    }
    return null;
  }

  /** Step 1 and 2: the hello and the agent's reply (null: no reply, wrong key, malformed). */
  async adoptHello(
    ip: string,
    adoptionKey: string,
  ): Promise<{ reply: AdoptReply; nonce: string } | null> {
    const hmacKey = adoptionHmacKey(adoptionKey);
    const nonce = b64u(crypto.randomBytes(16));
    const now = this.opts.clock.now();
    const hello = encodeDatagram(
      KIND.adoptHello,
      { server_id: this.opts.keys.serverId, nonce, iat: now, exp: now + 30_000 },
      { kind: 'hmac', key: hmacKey },
    );
    const payload = await this.exchange(ip, hello, KIND.adoptReply, nonce, hmacKey);
    if (!payload) return null;
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    const reply = {
      agent_uuid: text(payload.agent_uuid),
      hostname: text(payload.hostname),
      agent_version: text(payload.agent_version) ?? '',
      os_version: text(payload.os_version) ?? '',
      arch: text(payload.arch) ?? 'amd64',
      public_key: text(payload.public_key),
    };
    if (reply.agent_uuid === null || reply.hostname === null || reply.public_key === null)
      return null;
    return { reply: reply as AdoptReply, nonce };
  }

  /** Steps 3 and 4: pushes the bundle; true when the agent acknowledged it. */
  async pushBundle(
    ip: string,
    adoptionKey: string,
    nonce: string,
    bundle: unknown,
  ): Promise<boolean> {
    const push = encodeDatagram(KIND.bundlePush, { nonce, bundle }, this.opts.keys.signer());
    const ack = await this.exchange(ip, push, KIND.bundleAck, nonce, adoptionHmacKey(adoptionKey));
    return ack !== null;
  }
}
