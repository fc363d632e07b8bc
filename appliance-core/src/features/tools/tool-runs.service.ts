/**
 * How many on-box tool runs may be under way at once: per user and for the whole appliance
 * (APPLIANCE_TOOL_RUNS_PER_USER, default 4; APPLIANCE_TOOL_RUNS_TOTAL, default 16). Every route
 * that runs a process or holds a socket for a caller (ping and MTR streams, ping, traceroute, port
 * scan, SNMP walk, iperf3 client, whois, geoip, speed test) takes a slot before its work starts;
 * one request more answers 429 with `Retry-After` in the route's failure family.
 *
 * Invariant: a slot is taken in the route's onRequest hook (after the auth check, before the
 * stream opens or the body is read) and given back exactly once when the response closes: the
 * answer was sent, the event stream ended, or the client went away (the work is aborted then, see
 * platform/http/sse.ts). So a user who opens N streams holds N slots until they end, and one who
 * disconnects frees theirs at once.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { failure } from '../../platform/http/envelopes.js';
import { identityOf } from '../../platform/http/route-config.js';

export const DEFAULT_TOOL_RUNS_PER_USER = 4;
export const DEFAULT_TOOL_RUNS_TOTAL = 16;
/** Seconds a refused caller is told to wait: tool runs last seconds to a couple of minutes. */
export const TOOL_RUNS_RETRY_AFTER_SECONDS = 10;

export interface ToolRunLimits {
  perUser: number;
  total: number;
}

export class ToolRunSlots {
  private readonly byUser = new Map<number, number>();
  private running = 0;

  constructor(readonly limits: ToolRunLimits) {}

  /** Runs under way, in all and for one user. */
  count(userId?: number): number {
    return userId === undefined ? this.running : (this.byUser.get(userId) ?? 0);
  }

  /**
   * Takes a slot for `userId`: the function that gives it back (idempotent), or which limit
   * refused it.
   */
  acquire(userId: number): { release: () => void } | { refused: 'user' | 'total' } {
    const mine = this.byUser.get(userId) ?? 0;
    if (mine >= this.limits.perUser) return { refused: 'user' };
    if (this.running >= this.limits.total) return { refused: 'total' };
    this.byUser.set(userId, mine + 1);
    this.running++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.running--;
        const left = (this.byUser.get(userId) ?? 1) - 1;
        if (left <= 0) this.byUser.delete(userId);
        else this.byUser.set(userId, left);
      },
    };
  }

  refusalMessage(which: 'user' | 'total'): string {
    return which === 'user'
      ? `You have ${this.limits.perUser} tool runs under way, the most one user may have at once; try again when one has finished`
      : `The appliance is running ${this.limits.total} tools at once, its limit; try again shortly`;
  }

  /**
   * The onRequest hook of a tool route: takes a slot for the caller and gives it back when the
   * response closes; refuses with 429 and `Retry-After` when a limit is reached.
   */
  readonly hook: onRequestHookHandler = async (
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> => {
    const outcome = this.acquire(identityOf(request).user.id);
    if ('refused' in outcome) {
      void reply.header('retry-after', String(TOOL_RUNS_RETRY_AFTER_SECONDS));
      throw failure(429, this.refusalMessage(outcome.refused));
    }
    if (reply.raw.destroyed) outcome.release();
    else reply.raw.once('close', outcome.release);
  };
}
