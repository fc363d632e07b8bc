/**
 * URL monitoring (spec part 2 > URL monitoring): permission `urls`, not tag scoped. Every answer is
 * HTTP 200; failures are `{status: false, hasError: true, message}`. GET /api/urlTracker is the
 * designed report (availability, latency percentiles and certificate expiry per URL).
 *
 * saveUrl refuses hosts no check may reach (platform/net/outbound.ts: link-local and metadata
 * addresses always, loopback and private ones with APPLIANCE_URL_ALLOW_PRIVATE=off) as written,
 * without a lookup; the engine judges the resolved address again at every check. Intervals are
 * 30 s to 30 days; at most URL_TRACKER_LIMIT trackers are kept.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { legacy200 } from '../../platform/http/schemas.js';
import { DAY_MS, HOUR_MS, toIso, toSqlDateTime } from '../../platform/time/time.js';
import { hostRefusal } from '../../platform/net/outbound.js';
import { LegacyAlertSummary } from '../alerts/index.js';
import { urlPolicyOf, type UrlMonitorEngine } from './url.engine.js';
import {
  countUrlTrackers,
  deleteUrlTracker,
  findUrlTracker,
  insertUrlTracker,
  listUrlTrackers,
  updateUrlTracker,
  URL_DEFAULT_INTERVAL,
  URL_MAX_INTERVAL,
  URL_MIN_INTERVAL,
  URL_TRACKER_LIMIT,
  urlRecords,
  urlSamples,
} from './url.repository.js';

const URL_ROUTE = { access: allOf('urls'), errors: 'legacy', tags: ['url-monitors'] } as const;
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A URL tracker (spec part 2, URL tracker) as urlRecord builds it. */
const UrlTrackerRecord = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  interval: Type.Integer({ description: 'seconds' }),
  pattern: Type.String(),
  timestamp: Nullable(Type.Integer({ description: 'Unix seconds of the last check' })),
  latency: Nullable(Type.Number({ description: 'ms; -1 when the check got no answer' })),
  message: Nullable(Type.String()),
  status: Nullable(Type.Integer({ description: 'HTTP status of the last check' })),
  ssldate: Nullable(Type.String({ description: 'certificate expiry (YYYY-MM-DD HH:MM:SS UTC)' })),
  alerts: Type.Union([Type.Array(LegacyAlertSummary), Type.Null()], {
    description: 'the url_down alert (POST /api/legacy-alerts); null while no alert is attached',
  }),
});
const Rows = Type.Array(UrlTrackerRecord);
const Ms = Nullable(Type.Number({ description: 'ms' }));
/** One URL of the designed report GET /api/urlTracker. */
const UrlReportRow = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  interval: Type.Integer({ description: 'seconds' }),
  checks: Type.Integer(),
  failures: Type.Integer(),
  availability: Nullable(Type.Number({ description: '% of checks that passed' })),
  latency: Type.Object({ avg: Ms, p50: Ms, p95: Ms, p99: Ms }),
  last_checked_at: Nullable(Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })),
  last_status: Nullable(Type.Integer()),
  last_message: Nullable(Type.String()),
  ssldate: Nullable(Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })),
  ssl_days_left: Nullable(Type.Integer({ description: 'negative once expired' })),
});

const SaveUrlBody = Type.Object({
  newtracker: Type.Optional(
    Type.Object({
      url: Type.Optional(Type.Unknown()),
      pattern: Type.Optional(Type.Unknown()),
      interval: Type.Optional(Type.Unknown()),
      id: Type.Optional(Type.Unknown()),
    }),
  ),
});
const DeleteUrlBody = Type.Object({ id: Type.Optional(Type.Unknown()) });
const ReportQuery = Type.Object({
  hours: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 720,
      default: 24,
      description: 'report window in hours (default 24, at most 720)',
    }),
  ),
});

export interface UrlRoutesDeps {
  engine: Pick<UrlMonitorEngine, 'changed' | 'removed'>;
}

const positiveInt = (value: unknown): number | null => {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
};

export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export async function urlMonitorsRoutes(
  app: App,
  ctx: CoreContext,
  deps: UrlRoutesDeps,
): Promise<void> {
  const { db, clock } = ctx;

  // spec: part2 > URL monitoring > GET /api/getUrls
  defineRoute(app, {
    ...URL_ROUTE,
    method: 'GET',
    url: '/api/getUrls',
    summary: 'URL trackers',
    response: {
      200: legacy200(Type.Object({ status: Type.Literal(201), data: Rows })),
    },

    handler: async () => ({ status: 201 as const, data: urlRecords(db, listUrlTrackers(db)) }),
  });

  // spec: part2 > URL monitoring > POST /api/saveUrl
  defineRoute(app, {
    ...URL_ROUTE,
    method: 'POST',
    url: '/api/saveUrl',
    summary: 'Create or update (with `newtracker.id`) a URL tracker',
    body: SaveUrlBody,
    response: {
      200: legacy200(
        Type.Object({
          status: Type.Literal(201),
          message: Type.Object({
            id: Type.Integer(),
            url: Type.String(),
            pattern: Type.String(),
            interval: Type.Integer(),
          }),
        }),
      ),
    },

    handler: async (request) => {
      const tracker = request.body.newtracker ?? {};
      const url = typeof tracker.url === 'string' ? tracker.url.trim() : '';
      const pattern = typeof tracker.pattern === 'string' ? tracker.pattern : '';
      if (!url || !pattern) throw failure(422, 'Pattern and URL required');
      if (url.length > 2048 || pattern.length > 1024)
        throw failure(422, 'The URL must be at most 2048 characters and the pattern at most 1024');
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw failure(422, 'The URL is not valid');
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        throw failure(422, 'The URL scheme must be http or https');
      const refusal = hostRefusal(parsed.hostname, urlPolicyOf(ctx.config));
      if (refusal) throw failure(422, `This URL cannot be monitored: ${refusal}`);
      const interval =
        tracker.interval === undefined || tracker.interval === null || tracker.interval === ''
          ? URL_DEFAULT_INTERVAL
          : positiveInt(tracker.interval);
      if (interval === null || interval < URL_MIN_INTERVAL || interval > URL_MAX_INTERVAL)
        throw failure(
          422,
          `The interval must be a whole number of seconds from ${URL_MIN_INTERVAL} to ${URL_MAX_INTERVAL}`,
        );
      const now = clock.now();
      let id: number;
      if (tracker.id !== undefined && tracker.id !== null && tracker.id !== '') {
        const existing = positiveInt(tracker.id);
        if (existing === null || !findUrlTracker(db, existing))
          throw failure(404, 'URL tracker not found');
        id = existing;
        updateUrlTracker(db, id, { url, pattern, interval }, now);
      } else {
        // Counted and inserted with no await between: two requests cannot both take the last place.
        if (countUrlTrackers(db) >= URL_TRACKER_LIMIT)
          throw failure(
            422,
            `At most ${URL_TRACKER_LIMIT} URL trackers can be kept; delete one before adding another`,
          );
        id = insertUrlTracker(db, { url, pattern, interval }, now);
      }
      deps.engine.changed(id);
      return { status: 201 as const, message: { id, url, pattern, interval } };
    },
  });

  // spec: part2 > URL monitoring > POST /api/deleteUrl
  defineRoute(app, {
    ...URL_ROUTE,
    method: 'POST',
    url: '/api/deleteUrl',
    summary: 'Delete a URL tracker and its history',
    body: DeleteUrlBody,
    response: {
      200: legacy200(Type.Object({ status: Type.Literal(200), message: Type.String() })),
    },

    handler: async (request) => {
      const id = positiveInt(request.body.id);
      if (id === null) throw failure(422, 'The id field is required');
      if (!deleteUrlTracker(db, id)) throw failure(404, 'URL tracker not found');
      deps.engine.removed(id);
      return { status: 200 as const, message: 'URL tracker deleted' };
    },
  });

  // spec: part2 > URL monitoring > GET /api/getAllUrls
  defineRoute(app, {
    ...URL_ROUTE,
    method: 'GET',
    url: '/api/getAllUrls',
    summary: 'URL tracker rows',
    response: {
      200: legacy200(
        Type.Object({
          status: Type.Literal(201),
          hasError: Type.Literal(false),
          message: Type.Object({ data: Rows }),
        }),
      ),
    },

    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      message: { data: urlRecords(db, listUrlTrackers(db)) },
    }),
  });

  // designed: part2 > URL monitoring > GET /api/urlTracker (the report the spec marks "not shown")
  defineRoute(app, {
    ...URL_ROUTE,
    method: 'GET',
    url: '/api/urlTracker',
    summary:
      'URL tracker report: availability, latency percentiles and certificate expiry per URL over a window',
    description:
      '`hours` (1 to 720, default 24) back from now. Per URL: `checks`, `failures`, `availability` (% of checks that passed, null without checks), `latency` `{avg, p50, p95, p99}` in ms over answered checks, the last check (`last_checked_at`, `last_status`, `last_message`), `ssldate` and `ssl_days_left` (negative once expired; null for http).',
    querystring: ReportQuery,
    response: {
      200: legacy200(
        Type.Object({
          status: Type.Literal(200),
          hasError: Type.Literal(false),
          window: Type.Object({ start_time: Type.String(), end_time: Type.String() }),
          data: Type.Array(UrlReportRow),
        }),
      ),
    },

    handler: async (request) => {
      const end = clock.now();
      const start = end - (request.query.hours ?? 24) * HOUR_MS;
      const data = listUrlTrackers(db).map((row) => {
        const checks = urlSamples(db, row.id, start, end);
        const answered = checks
          .filter((c) => c.latency >= 0)
          .map((c) => c.latency)
          .sort((a, b) => a - b);
        const passed = checks.filter((c) => c.ok === 1).length;
        const expiry =
          [...checks].reverse().find((c) => c.ssl_expires_at !== null)?.ssl_expires_at ??
          (row.ssldate ? Date.parse(`${row.ssldate.replace(' ', 'T')}Z`) : null);
        const round = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);
        return {
          id: row.id,
          url: row.url,
          interval: row.interval,
          checks: checks.length,
          failures: checks.length - passed,
          availability: checks.length ? Math.round((passed / checks.length) * 10000) / 100 : null,
          latency: {
            avg: round(
              answered.length ? answered.reduce((a, b) => a + b, 0) / answered.length : null,
            ),
            p50: round(percentile(answered, 50)),
            p95: round(percentile(answered, 95)),
            p99: round(percentile(answered, 99)),
          },
          last_checked_at: row.timestamp === null ? null : toSqlDateTime(row.timestamp * 1000),
          last_status: row.status,
          last_message: row.message,
          ssldate: expiry === null ? null : toSqlDateTime(expiry),
          ssl_days_left: expiry === null ? null : Math.floor((expiry - end) / DAY_MS),
        };
      });
      return {
        status: 200 as const,
        hasError: false as const,
        window: { start_time: toIso(start), end_time: toIso(end) },
        data,
      };
    },
  });
}
