/**
 * Event rows (docs/agent-protocol.md §4, `eventlog.read`) and the severity scale they share with
 * the appliance's Windows-event ingestion: info 0, critical 1, error 2, warning 3, verbose 5.
 */
import { OpError } from './paths.js';

export interface EventRow {
  record_id: number;
  timestamp: number;
  event_id: number;
  log: string;
  source: string;
  severity: number;
  data: string;
}

export const MAX_EVENTS = 5000;

export interface EventQuery {
  since: number;
  until: number;
  max: number;
  query: string;
}

export function parseEventArgs(args: Record<string, unknown>, now = Date.now()): EventQuery {
  const since = args.since === undefined ? now - 86_400_000 : args.since;
  const until = args.until === undefined ? now : args.until;
  const max = args.max === undefined ? MAX_EVENTS : args.max;
  if (typeof since !== 'number' || !Number.isFinite(since) || since < 0)
    throw new OpError('since must be a time in ms');
  if (typeof until !== 'number' || !Number.isFinite(until) || until < since)
    throw new OpError('until must be a time in ms, not before since');
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1)
    throw new OpError('max must be a positive integer');
  const query = typeof args.query === 'string' ? args.query : '';
  return { since, until, max: Math.min(max, MAX_EVENTS), query };
}
