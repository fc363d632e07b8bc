/**
 * Rate limits (spec part 1, Limits) through @fastify/rate-limit, per client address. Its
 * in-memory store gives every route a private bucket even when routes name a group, so this
 * store keeps one map for all routes: a route's key is its own route unless it names a group,
 * in which case every route of the group counts against the same bucket.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../time/time.js';
import { ApiFailure } from './envelopes.js';

interface Counter {
  current: number;
  ttl: number;
  startMs: number;
}

const MAX_KEYS = 50_000;

/**
 * Windows are timed by the appliance's clock (the one the composition root hands every feature),
 * so tests advance a window instead of waiting for it.
 */
export class SharedWindowStore {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly clock: Clock = systemClock) {}

  child(): this {
    return this;
  }

  incr(
    key: string,
    callback: (err: Error | null, result: { current: number; ttl: number }) => void,
    timeWindow: number,
  ): void {
    const now = this.clock.now();
    let counter = this.counters.get(key);
    if (!counter || counter.startMs + timeWindow <= now) {
      if (!counter && this.counters.size >= MAX_KEYS) this.evictExpired(now, timeWindow);
      counter = { current: 0, ttl: timeWindow, startMs: now };
      this.counters.set(key, counter);
    }
    counter.current++;
    counter.ttl = counter.startMs + timeWindow - now;
    callback(null, { current: counter.current, ttl: counter.ttl });
  }

  private evictExpired(now: number, timeWindow: number): void {
    for (const [key, c] of this.counters)
      if (c.startMs + timeWindow <= now) this.counters.delete(key);
    if (this.counters.size >= MAX_KEYS)
      this.counters.delete(this.counters.keys().next().value as string);
  }
}

/**
 * Keys a route's bucket by the authenticated user instead of the client address (set as the
 * route's `keyGenerator`): operators behind one address (a NAT, a jump host) or sharing it with
 * anonymous traffic keep their own bucket. The auth hook runs before the rate limit, so an
 * identity is always present on an authenticated route; the address is the fallback.
 */
export function perUser(request: FastifyRequest): string {
  const user = request.identity?.user.id;
  return user === undefined ? `${request.ip}|` : `user:${user}|`;
}

function keyOf(request: FastifyRequest): string {
  const limit = request.routeOptions.config?.rateLimit;
  const group = limit ? limit.groupId : undefined;
  // The plugin appends the group id itself; without one, the route is the bucket.
  return group ? `${request.ip}|` : `${request.ip}|${request.method} ${request.routeOptions.url}`;
}

export async function installRateLimits(
  app: FastifyInstance,
  clock: Clock = systemClock,
): Promise<void> {
  // The plugin builds the store itself (`new store(options)`); one instance bound to the clock.
  const store = new SharedWindowStore(clock);
  await app.register(rateLimit, {
    global: false,
    store: function SharedStore() {
      return store;
    } as never,
    keyGenerator: keyOf,
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new ApiFailure(429, `Too Many Attempts. Retry after ${seconds} seconds.`, {
        oauthCode: 'temporarily_unavailable',
      });
    },
  });
}

export const PER_MINUTE = 60_000;
