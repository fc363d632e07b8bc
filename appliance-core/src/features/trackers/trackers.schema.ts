/**
 * TypeBox schemas of the tracker endpoints (spec part 2 > Trackers).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IdParam } from '../../platform/http/schemas.js';

export const BoolLike = Type.Unsafe<boolean | 0 | 1 | '0' | '1' | 'true' | 'false'>({
  enum: [true, false, 0, 1, '0', '1', 'true', 'false'],
  description: 'true/false, 1/0, "1"/"0", "true"/"false"',
});
export type BoolLike = Static<typeof BoolLike>;
export const toBool = (value: BoolLike): boolean =>
  value === true || value === 1 || value === '1' || value === 'true';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = Type.Integer({ minimum: 1 });
const Interval = Type.Integer({ minimum: 1, maximum: 2_592_000, description: 'seconds' });

export const IdParams = Type.Object({ id: IdParam() });
export const DeviceIdParams = Type.Object({ deviceId: IdParam() });
export const HoursQuery = Type.Object({
  hours: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 8760,
      default: 4,
      description: 'log window in hours (default 4)',
    }),
  ),
});
export const IdBody = Type.Object({ id: Id });

export const DiskSetBody = Type.Object({
  id: Type.Optional(Id),
  path: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[0-9]+(\\.[0-9]+)+$',
      description: 'free-space OID (create only); its last component is the storage index',
    }),
  ),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  deviceId: Type.Optional(Id),
  interval: Type.Optional(Interval),
  enable_logging: Type.Optional(BoolLike),
});
export type DiskSetBody = Static<typeof DiskSetBody>;

export const InterfaceSetBody = Type.Object({
  id: Id,
  description: Type.Optional(Type.String({ maxLength: 255 })),
  interval: Type.Optional(Interval),
  enable_logging: Type.Optional(BoolLike),
});
export type InterfaceSetBody = Static<typeof InterfaceSetBody>;

export const LatencySetBody = Type.Object({
  id: Type.Optional(Id),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  deviceId: Type.Optional(Id),
  interval: Type.Optional(Interval),
  timeout: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000, description: 'milliseconds' }),
  ),
  lossout: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'loss % at which a reading counts as down',
    }),
  ),
});
export type LatencySetBody = Static<typeof LatencySetBody>;

export const OidSetBody = Type.Object({
  id: Type.Optional(Id),
  oid: Type.Optional(
    Type.String({ minLength: 3, maxLength: 255, pattern: '^\\.?[0-9]+(\\.[0-9]+)+$' }),
  ),
  deviceId: Type.Optional(Id),
  datatype: Type.Optional(Type.Union([Type.Literal('S'), Type.Literal('I')])),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  interval: Type.Optional(Interval),
  enable_logging: Type.Optional(BoolLike),
});
export type OidSetBody = Static<typeof OidSetBody>;

export const ServiceSetBody = Type.Object({
  id: Type.Optional(Id),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^!#\\r\\n]+$' })),
  deviceId: Type.Optional(Id),
  oid: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  interval: Type.Optional(Interval),
  enable_logging: Type.Optional(BoolLike),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});
export type ServiceSetBody = Static<typeof ServiceSetBody>;

export const PortSetBody = Type.Object({
  id: Type.Optional(Id),
  deviceId: Type.Optional(Id),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  interval: Type.Optional(Interval),
  label: Type.Optional(Type.String({ maxLength: 255 })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  enable_logging: Type.Optional(BoolLike),
});
export type PortSetBody = Static<typeof PortSetBody>;

/** Bodies of the in-body-status stats endpoints: validated by hand (a missing id is `status: 204`). */
export const DiskStatsBody = Type.Object({ diskId: Type.Optional(Type.Unknown()) });
export const LatencyStatsBody = Type.Object({ icmpingId: Type.Optional(Type.Unknown()) });

export const GetLatencyTrackerBody = Type.Object({
  deviceId: Type.Integer({ minimum: 1 }),
  hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 8760, default: 4 })),
});
export const GetTcpTrackerBody = Type.Object({
  deviceId: Type.Integer({ minimum: 1 }),
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 8760, default: 4 })),
});

// --- records of the trackers the device crawl creates ---------------------------------------------

function InterfaceTrackerRecordFields() {
  return {
    id: Type.Integer(),
    device_id: Type.Integer(),
    interface: Type.Integer({ description: 'ifIndex' }),
    name: Type.String(),
    description: Type.String(),
    interval: Type.Integer({ description: 'seconds' }),
    enable_logging: Type.Boolean(),
    type: Nullable(Type.Integer({ description: 'ifType' })),
    speed: Nullable(Type.Integer({ description: 'bits per second' })),
    mac: Nullable(Type.String()),
    admin_status: Nullable(Type.Integer()),
    oper_status: Nullable(Type.Integer()),
  };
}
export const InterfaceTrackerRecord = Type.Object(InterfaceTrackerRecordFields());
export type InterfaceTrackerRecord = Static<typeof InterfaceTrackerRecord>;

function DiskTrackerRecordFields() {
  return {
    id: Type.Integer(),
    device_id: Type.Integer(),
    name: Type.String(),
    index: Type.Integer({ description: 'hrStorageIndex' }),
    freespace_oid: Type.String(),
    interval: Type.Integer({ description: 'seconds' }),
    enable_logging: Type.Boolean(),
    available: Nullable(Type.Integer({ description: 'bytes' })),
    total: Nullable(Type.Integer({ description: 'bytes' })),
  };
}
export const DiskTrackerRecord = Type.Object(DiskTrackerRecordFields());
export type DiskTrackerRecord = Static<typeof DiskTrackerRecord>;

// --- answers -------------------------------------------------------------------------------------
// Key order is the order the records are built in: the serializer writes a schema's properties in
// declared order, every required one before any optional one (so an optional field is declared,
// and built, last). A field that may be null is Nullable (a non-nullable null would print as 0),
// and a field the schema does not list is dropped.

const DateTime = Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' });

export const IdAnswer = Type.Object({ id: Type.Integer() });
export const MessageAnswer = Type.Object({ message: Type.String() });
export const SuccessAnswer = Type.Object({ success: Type.String() });
export const StorageEstimate = Type.Object({
  rows: Type.Integer(),
  size: Type.String({ description: 'bytes stored, in 1024 steps (`2.93 KB`)' }),
});

/** A legacy alert attached to a tracker (the interface link-state alert and, later, alerting's). */
export const AlertRecord = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: '`linkstate` (interfaces)' }),
  active: Type.Boolean(),
  last_state: Nullable(Type.Integer({ description: 'the value the alert last saw' })),
  last_fired_at: Nullable(Type.Integer({ description: 'UTC milliseconds' })),
  fired_count: Type.Integer(),
});
const Alerts = Type.Array(AlertRecord);

/** The device fields a tracker answer carries. */
const deviceFields = {
  dev_label: Type.String(),
  dev_ip: Type.String(),
  dev_profile: Type.String(),
};

/** A neighbour of an interface (LLDP/CDP/ARP; not crawled yet, so lists are empty). */
export const InterfaceNeighbour = Type.Object({
  dev_id: Nullable(Type.Integer()),
  ip: Nullable(Type.String()),
  label: Nullable(Type.String()),
  mac: Nullable(Type.String()),
  iface: Nullable(Type.String()),
});

// Disks.
export const DiskLog = Type.Object({
  timestamp: DateTime,
  available: Type.Integer({ description: 'bytes' }),
  total: Type.Integer({ description: 'bytes' }),
});
export const DiskDetail = Type.Object({
  ...DiskTrackerRecordFields(),
  ...deviceFields,
  logs: Type.Array(DiskLog),
  alerts: Alerts,
});
export const DeviceDisk = Type.Object({ ...DiskTrackerRecordFields(), alerts: Alerts });
export const DiskIndexRow = Type.Object({
  dev_id: Type.Integer(),
  dev_label: Type.String(),
  id: Type.Integer(),
  name: Type.String(),
});
export const DiskStats = Type.Object({
  oneDayGrowthKB: Type.Number(),
  oneWeekGrowthKB: Type.Number(),
  oneMonthGrowthKB: Type.Number(),
  allTimeGrowthKB: Type.Number(),
  estimatedFillTime: Nullable(DateTime),
});

// Interfaces.
export const InterfaceLog = Type.Object({
  timestamp: DateTime,
  in_bps: Type.Integer(),
  out_bps: Type.Integer(),
  oper_status: Type.Optional(
    Nullable(Type.Integer({ description: 'ifOperStatus; raw readings only (windows up to 6 h)' })),
  ),
});
export const InterfaceDetail = Type.Object({
  ...InterfaceTrackerRecordFields(),
  ...deviceFields,
  logs: Type.Array(InterfaceLog),
  alerts: Alerts,
  connected: Type.Array(InterfaceNeighbour),
});
export const DeviceInterface = Type.Object({
  ...InterfaceTrackerRecordFields(),
  alerts: Alerts,
  connected: Type.Array(InterfaceNeighbour),
});
export const InterfaceIndexRow = Type.Object({
  dev_id: Type.Integer(),
  dev_label: Type.String(),
  id: Type.Integer(),
  description: Type.String(),
  name: Type.String(),
  interface: Type.Integer(),
});
export const InterfaceConnections = Type.Record(Type.String(), Type.Array(InterfaceNeighbour), {
  description: 'interface id -> neighbours (interfaces without neighbours omitted)',
});
export const AlertToggled = Type.Object({
  id: Type.Integer(),
  alert: AlertRecord,
  message: Type.String(),
});

// Latency.
const latencyFields = {
  icmping_id: Type.Integer(),
  id: Type.Integer(),
  dev_id: Type.Integer(),
  label: Type.String(),
  interval: Type.Integer({ description: 'seconds' }),
  timeout: Type.Integer({ description: 'milliseconds' }),
  lossout: Type.Integer({ description: 'loss % at which a reading counts as down' }),
  latency: Nullable(Type.Number({ description: 'ms of the latest reading, -1 when down' })),
  loss: Nullable(Type.Number({ description: '% of the latest reading' })),
  last_polled_at: Nullable(DateTime),
};
export const LatencyTrackerRecord = Type.Object(latencyFields);
export const LatencyLog = Type.Object({
  icmping_id: Type.Integer(),
  latency: Type.Number({ description: 'ms; -1 when no probe was answered' }),
  loss: Type.Number({ description: '%' }),
  timestamp: DateTime,
});
export const LatencyDetail = Type.Object({
  ...latencyFields,
  dev_label: Type.String(),
  logs: Type.Array(LatencyLog),
  alerts: Alerts,
});
export const DeviceLatency = Type.Object({
  ...latencyFields,
  dev_label: Type.String(),
  alerts: Alerts,
});
export const LatencyIndexRow = Type.Object({
  dev_id: Type.Integer(),
  dev_label: Type.String(),
  id: Type.Integer(),
  label: Type.String(),
});
export const LatencyStats = Type.Object({
  dayAvgLatency: Nullable(Type.Number()),
  weekAvgLatency: Nullable(Type.Number()),
  dayAvgLoss: Nullable(Type.Number()),
  dayUptime: Nullable(Type.Number()),
  weekUptime: Nullable(Type.Number()),
  allTimeUptime: Nullable(Type.Number()),
  currentLatency: Nullable(Type.Number()),
  currentLoss: Nullable(Type.Number()),
  monitoringDuration: Type.Integer({ description: 'seconds' }),
});

// Custom OIDs and services (one table; a service record carries `name` after `label`). The
// serializer writes every required property before any optional one, so the two records are two
// schemas rather than one with an optional `name`.
const oidHead = {
  id: Type.Integer(),
  device_id: Type.Integer(),
  oid: Type.String(),
  label: Type.String(),
};
const oidTail = {
  datatype: Type.Union([Type.Literal('S'), Type.Literal('I')]),
  interval: Type.Integer({ description: 'seconds' }),
  enable_logging: Type.Boolean(),
  value: Nullable(Type.String({ description: 'the latest reading' })),
  last_polled_at: Nullable(DateTime),
};
const oidFields = { ...oidHead, ...oidTail };
const serviceFields = {
  ...oidHead,
  name: Nullable(Type.String({ description: 'the Windows service name' })),
  ...oidTail,
};
export const OidTrackerRecord = Type.Object(oidFields);
export const OidLog = Type.Object({ timestamp: DateTime, value: Nullable(Type.String()) });
export const OidDetail = Type.Object({
  ...oidFields,
  ...deviceFields,
  logs: Type.Array(OidLog),
  alerts: Alerts,
});
export type OidDetail = Static<typeof OidDetail>;
export const ServiceDetail = Type.Object({
  ...serviceFields,
  ...deviceFields,
  logs: Type.Array(OidLog),
  alerts: Alerts,
});
export type ServiceDetail = Static<typeof ServiceDetail>;
export const DeviceService = Type.Object({ ...serviceFields, alerts: Alerts });

// TCP ports.
const portFields = {
  id: Type.Integer(),
  device_id: Type.Integer(),
  port: Type.Integer(),
  state: Nullable(
    Type.String({ description: '`open` or `closed` (closed, filtered or unreachable)' }),
  ),
  interval: Type.Integer({ description: 'seconds' }),
  enable_logging: Type.Boolean(),
  label: Type.String(),
  name: Type.String({ description: 'alias of label' }),
  latency: Nullable(Type.Number({ description: 'ms of the latest check, -1 when closed' })),
  last_polled_at: Nullable(DateTime),
};
export const PortTrackerRecord = Type.Object(portFields);
export const PortLog = Type.Object({
  port_id: Type.Integer(),
  latency: Type.Number({ description: 'ms; -1: closed, filtered or unreachable' }),
  timestamp: DateTime,
});
export const PortDetail = Type.Object({
  ...portFields,
  dev_id: Type.Integer(),
  dev_label: Type.String(),
  logs: Type.Array(PortLog),
  alerts: Alerts,
});
export const DevicePort = Type.Object({ ...portFields, alerts: Alerts });
export const PortIndexRow = Type.Object({
  dev_id: Type.Integer(),
  dev_label: Type.String(),
  id: Type.Integer(),
  port: Type.Integer(),
  label: Type.String(),
});

/**
 * The in-body-status answers of POST /api/disk/stats and /api/latency/stats (always HTTP 200):
 * `{status: 204 | 200 | 500, hasError, message}` or `{status: 200, hasError: false, data}`.
 */
export const InBodyStatus = <T extends TSchema>(data: T) =>
  Type.Object({
    status: Type.Integer({ description: '204 without an id, 200, or 500 on error' }),
    hasError: Type.Boolean(),
    message: Type.Optional(Type.String()),
    data: Type.Optional(data),
  });

// The device widgets (spec part 2 > Dashboards and layouts > getLatencyTracker, getTCPTracker).
const widgetAnswer = <T extends TSchema>(message: T) =>
  Type.Object({
    status: Type.Integer({
      description: '200, or 204 with an empty message when there is no probe',
    }),
    hasError: Type.Literal(false),
    message,
  });
export const LatencyWidget = widgetAnswer(
  Type.Object({
    dev_label: Type.Optional(Type.String()),
    dev_ip: Type.Optional(Type.String()),
    logs: Type.Optional(Type.Array(LatencyLog)),
  }),
);
export const TcpWidget = widgetAnswer(
  Type.Object({
    dev_label: Type.Optional(Type.String()),
    port: Type.Optional(Type.Integer()),
    logs: Type.Optional(Type.Array(PortLog)),
  }),
);

// What trackers add to device records (devices' GET /api/devices relations and GET
// /api/device/{device} sections), in the order trackers.service.ts builds them.
export const DEVICE_RELATION_SCHEMAS = {
  alerts: Alerts,
  ping: Nullable(LatencyTrackerRecord),
  oids: Type.Array(OidTrackerRecord),
  interfaces: Type.Array(InterfaceTrackerRecord),
  ports: Type.Array(PortTrackerRecord),
  disks: Type.Array(DiskTrackerRecord),
};
export const DEVICE_SECTION_SCHEMAS = {
  alerts: Alerts,
  ping: Type.Array(LatencyLog),
  oids: Type.Array(Type.Object({ ...oidFields, alerts: Alerts, logs: Type.Array(OidLog) })),
  interfaces: Type.Array(
    Type.Object({
      ...InterfaceTrackerRecordFields(),
      alerts: Alerts,
      logs: Type.Array(InterfaceLog),
    }),
  ),
  ports: Type.Array(Type.Object({ ...portFields, logs: Type.Array(PortLog) })),
  disks: Type.Array(
    Type.Object({ ...DiskTrackerRecordFields(), alerts: Alerts, logs: Type.Array(DiskLog) }),
  ),
};
