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
  /** The query's channel (`System`, `Application` ...): used by a Windows agent, ignored on Linux. */
  channel: string;
  /** Windows Level values (empty: all): used by a Windows agent, ignored on Linux. */
  levels: number[];
  /** Event ids (empty: all): used by a Windows agent, ignored on Linux. */
  event_ids: number[];
}

function integers(value: unknown, name: string, max: number): number[] {
  if (value === undefined) return [];
  if (
    !Array.isArray(value) ||
    value.length > 256 ||
    !value.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= max)
  )
    throw new OpError(`${name} must be an array of integers from 0 to ${max}`);
  return value as number[];
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
  const channel = typeof args.channel === 'string' ? args.channel : query;
  if (channel.length > 255 || channel.includes('\0'))
    throw new OpError('channel must be at most 255 characters without NUL');
  return {
    since,
    until,
    max: Math.min(max, MAX_EVENTS),
    query,
    channel,
    levels: integers(args.levels, 'levels', 5),
    event_ids: integers(args.event_ids, 'event_ids', 65535),
  };
}
