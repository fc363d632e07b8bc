/**
 * TypeBox shapes of the network-tool endpoints (spec part 2 > Network tools) and the types
 * derived from them. Response schemas list every field: the serializer drops anything else.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IdParam, StatusMessageBody, type StreamEvent } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// --- path parameters ------------------------------------------------------------------------
// Targets are checked by the handlers (platform/net/targets.ts) so that a bad one is answered in
// the endpoint's own failure shape; the schema only bounds the length.
const TargetText = Type.String({ maxLength: 1024 });
export const PingParams = Type.Object({ pingTarget: TargetText });
export const MtrParams = Type.Object({ mtrTarget: TargetText });
export const TraceParams = Type.Object({ traceTarget: TargetText });
export const IpParams = Type.Object({ ip: TargetText });

// --- event streams --------------------------------------------------------------------------
export const PingSummary = Type.Object({
  total_transmitted: Type.Integer(),
  total_received: Type.Integer(),
  packet_loss: Type.Number({ description: 'percent' }),
});
export type PingSummary = Static<typeof PingSummary>;
export const MtrFrame = Type.Union([
  Type.Object({ type: Type.Literal('sent'), hop: Type.Integer() }),
  Type.Object({ type: Type.Literal('host'), hop: Type.Integer(), host: Type.String() }),
  Type.Object({
    type: Type.Literal('reply'),
    hop: Type.Integer(),
    latency: Type.Number({ description: 'ms' }),
  }),
]);
export type MtrFrame = Static<typeof MtrFrame>;
/** The events of SSEgetPingInfo (both on the default event). */
export const PING_EVENTS: readonly StreamEvent[] = [
  {
    description: 'One reply, as it arrives',
    data: Type.Object({
      icmp_seq: Type.Integer(),
      latency: Type.Number({ description: 'ms' }),
      summary: Type.Null(),
    }),
  },
  { description: 'The summary, last', data: Type.Object({ summary: PingSummary }) },
];

// --- ping (JSON) ------------------------------------------------------------------------------
export const PingResult = Type.Object({
  address: Nullable(Type.String()),
  latency: Nullable(Type.Integer({ description: 'average round trip in ms, rounded' })),
  status: Type.Boolean({ description: 'true when at least one reply came back' }),
  hostname: Type.String(),
});
export type PingResult = Static<typeof PingResult>;
export const PingAnswer = Type.Union([
  Type.Object({
    status: Type.Literal(201),
    message: Type.String({ description: 'JSON-encoded {address, latency, status, hostname}' }),
  }),
  StatusMessageBody,
]);

// --- traceroute -------------------------------------------------------------------------------
export const TraceHop = Type.Object({
  hop: Type.Integer(),
  address: Type.String({ description: "the hop's address, or '*' when it did not answer" }),
  latency: Nullable(Type.Number({ description: 'ms' })),
  hostname: Type.String({
    description: "reverse name, the address when it has none, 'N/A' when the address is not an IP",
  }),
  mtu: Nullable(Type.Integer()),
});
export type TraceHop = Static<typeof TraceHop>;
export const TraceAnswer = Type.Union([
  Type.Object({ status: Type.Literal(201), message: Type.Array(TraceHop) }),
  StatusMessageBody,
]);

// --- port scan --------------------------------------------------------------------------------
export const PortscanBody = Type.Object({
  ip: Type.String({ minLength: 1, maxLength: 255 }),
  portlist: Type.String({
    minLength: 1,
    maxLength: 1024,
    description: 'ports and ranges, for example 22,80,8000-8100',
  }),
  timing: Type.Optional(Type.Unknown({ description: '3, 4 or 5; any other value is taken as 4' })),
  service: Type.Optional(
    Type.Union(
      [
        Type.Boolean(),
        Type.Literal(0),
        Type.Literal(1),
        Type.Literal('true'),
        Type.Literal('false'),
        Type.Literal('1'),
        Type.Literal('0'),
      ],
      { description: 'version detection (nmap -sV)' },
    ),
  ),
});
export type PortscanBody = Static<typeof PortscanBody>;
export const PortscanAnswer = Type.Union([
  Type.Object({
    status: Type.Literal(201),
    message: Type.String({ description: 'raw scanner output' }),
  }),
  Type.Object({ status: Type.Literal('timeout'), message: Type.String() }),
  StatusMessageBody,
]);

export const PortServiceNames = Type.Object({
  status: Type.Literal(200),
  services: Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.String()),
});
export const PortParams = Type.Object({ port: Type.Integer({ minimum: 1, maximum: 65535 }) });
export const PortServiceNameBody = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[\\x21-\\x7e](?:[\\x20-\\x7e]*[\\x21-\\x7e])?$',
    errorMessage: 'The name must be 1 to 64 printable ASCII characters.',
  }),
});
export const PortServiceNameSaved = Type.Object({
  status: Type.Literal(200),
  port: Type.Integer(),
  name: Type.String(),
});
export const PortServiceNameDeleted = Type.Object({
  status: Type.Literal(200),
  port: Type.Integer(),
});

// --- throughput ---------------------------------------------------------------------------------
export const SpeedTestResult = Type.Object({
  server: Type.String({ description: 'base URL of the speed-test server' }),
  ping: Type.Number({ description: 'median round trip of small requests, ms' }),
  jitter: Type.Number({ description: 'mean difference between consecutive round trips, ms' }),
  download: Type.Number({ description: 'bits per second' }),
  upload: Type.Number({ description: 'bits per second' }),
  bytes_received: Type.Integer(),
  bytes_sent: Type.Integer(),
  timestamp: Type.String({ description: 'ISO 8601, UTC' }),
});
export type SpeedTestResult = Static<typeof SpeedTestResult>;

export const IperfBody = Type.Object({
  host: Type.String({ maxLength: 255 }),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 5201 })),
  duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, default: 10 })),
  protocol: Type.Optional(
    Type.Union([Type.Literal('tcp'), Type.Literal('udp')], { default: 'tcp' }),
  ),
  direction: Type.Optional(
    Type.Union([Type.Literal('download'), Type.Literal('upload')], { default: 'download' }),
  ),
});
export type IperfBody = Static<typeof IperfBody>;

export const IperfResult = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  protocol: Type.Union([Type.Literal('tcp'), Type.Literal('udp')]),
  direction: Type.Union([Type.Literal('download'), Type.Literal('upload')]),
  duration: Type.Number({ description: 'seconds measured' }),
  bytes: Type.Integer({ description: 'bytes that reached the receiving side' }),
  bits_per_second: Type.Number({ description: 'throughput at the receiving side' }),
  sent_bytes: Type.Integer(),
  sent_bits_per_second: Type.Number(),
  retransmits: Nullable(Type.Integer({ description: 'TCP only' })),
  jitter_ms: Nullable(Type.Number({ description: 'UDP only' })),
  lost_packets: Nullable(Type.Integer({ description: 'UDP only' })),
  lost_percent: Nullable(Type.Number({ description: 'UDP only' })),
  timestamp: Type.String({ description: 'ISO 8601, UTC' }),
});
export type IperfResult = Static<typeof IperfResult>;

export const HistoryRow = Type.Object({
  id: Type.Integer(),
  timestamp: Type.String({ description: 'ISO 8601, UTC' }),
  kind: Type.Union([Type.Literal('speedtest'), Type.Literal('iperf_client')]),
  target: Nullable(Type.String()),
  // A row written by another release may hold other fields: it is passed through as stored.
  result: Type.Union([
    SpeedTestResult,
    IperfResult,
    Type.Object({}, { additionalProperties: true }),
  ]),
});
export type HistoryRow = Static<typeof HistoryRow>;
export const HistoryList = Type.Object({ data: Type.Array(HistoryRow) });
export const HistoryQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
});
export const HistoryIdParams = Type.Object({ id: IdParam() });

export const IperfServerStatus = Type.Object({
  active: Type.Boolean(),
  state: Type.String({ description: 'active, inactive or failed' }),
  port: Type.Integer(),
  connectHost: Type.String({ description: 'the host name the caller used to reach the appliance' }),
});
export type IperfServerStatus = Static<typeof IperfServerStatus>;

// --- whois and geoip ----------------------------------------------------------------------------
export const WhoisAnswer = Type.Union([
  Type.Object({ status: Type.Literal(201), message: Type.Record(Type.String(), Type.String()) }),
  StatusMessageBody,
]);

export const GeoLocation = Type.Object({
  ip: Type.String(),
  countryName: Nullable(Type.String()),
  countryCode: Nullable(Type.String()),
  regionName: Nullable(Type.String()),
  cityName: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
  timeZone: Nullable(Type.String()),
});
export type GeoLocation = Static<typeof GeoLocation>;
export const GeoAnswer = Type.Union([
  Type.Object({ status: Type.Literal(201), message: GeoLocation }),
  StatusMessageBody,
]);
