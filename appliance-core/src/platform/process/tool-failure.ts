/**
 * A system tool, or the peer a tool measures against, could not do what was asked: the one
 * failure type of every tool, whatever ran (a missing program, ping without an answer, an iperf3
 * run that failed, a speed-test server that refused).
 *
 * Invariant: the message is written for the caller (what failed and why, never a stack or a
 * path of the appliance), so it is shown as it is. Nothing but the platform translates it: the
 * error handler renders it in the failing route's family, with the status that route declares
 * for tool failures (`RouteErrors.toolFailureStatus`, the tools' HTTP 200 `{status: false,
 * message}`) or else the failure's own status; an event stream reports it as `event: error`.
 */
import type { Family } from '../http/envelopes.js';

export interface ToolFailureOptions {
  /** HTTP status where the route declares none for tool failures (default 500). */
  status?: number;
  /** The response family where the spec gives this failure another one than the route's. */
  family?: Family;
}

export class ToolFailure extends Error {
  readonly status: number;
  readonly family: Family | undefined;
  constructor(message: string, options: ToolFailureOptions = {}) {
    super(message);
    this.name = new.target.name;
    this.status = options.status ?? 500;
    this.family = options.family;
  }
}
