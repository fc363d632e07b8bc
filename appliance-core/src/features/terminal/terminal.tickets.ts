/**
 * Terminal tickets: a browser cannot put a bearer token on a WebSocket, so an authenticated `sa`
 * POST mints a short-lived, single-use ticket bound to the caller, and the socket presents it.
 *
 * Invariants: a ticket is 32 random bytes (base64url), kept only as its SHA-256 digest; it is
 * consumed by its first use whatever the outcome; it expires after TICKET_TTL_MS; at most
 * MAX_PENDING tickets are kept (the oldest go first).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/time/time.js';

export const TICKET_TTL_MS = 30_000;
const MAX_PENDING = 1000;

export interface TicketGrant {
  userId: number;
  /** The bearer token that minted the ticket: re-resolved at connect time (revocation, permissions). */
  bearer: string;
  expiresAt: number;
}

const digest = (ticket: string) => createHash('sha256').update(ticket).digest('base64url');

export class TicketStore {
  private readonly pending = new Map<string, TicketGrant>();

  constructor(private readonly clock: Clock) {}

  mint(userId: number, bearer: string): { ticket: string; expiresAt: number } {
    this.sweep();
    if (this.pending.size >= MAX_PENDING) {
      const oldest = this.pending.keys().next().value;
      if (oldest !== undefined) this.pending.delete(oldest);
    }
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = this.clock.now() + TICKET_TTL_MS;
    this.pending.set(digest(ticket), { userId, bearer, expiresAt });
    return { ticket, expiresAt };
  }

  /** The grant of a live ticket, consumed by this call; null when unknown, used or expired. */
  consume(ticket: string): TicketGrant | null {
    const key = digest(ticket);
    const grant = this.pending.get(key);
    if (!grant) return null;
    this.pending.delete(key);
    return grant.expiresAt > this.clock.now() ? grant : null;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [key, grant] of this.pending) if (grant.expiresAt <= now) this.pending.delete(key);
  }
}
