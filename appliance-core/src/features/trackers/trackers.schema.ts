/**
 * TypeBox schemas of the tracker endpoints (spec part 2 > Trackers).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const BoolLike = Type.Unsafe<boolean | 0 | 1 | '0' | '1' | 'true' | 'false'>({
  enum: [true, false, 0, 1, '0', '1', 'true', 'false'],
  description: 'true/false, 1/0, "1"/"0", "true"/"false"',
});
export type BoolLike = Static<typeof BoolLike>;
export const toBool = (value: BoolLike): boolean =>
  value === true || value === 1 || value === '1' || value === 'true';

const Id = Type.Integer({ minimum: 1 });
const Interval = Type.Integer({ minimum: 1, maximum: 2_592_000, description: 'seconds' });

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const DeviceIdParams = Type.Object({ deviceId: Type.Integer({ minimum: 1 }) });
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

export const IdAnswer = Type.Object({ id: Type.Integer() });
export const MessageAnswer = Type.Object({ message: Type.String() });
export const StorageEstimate = Type.Object({
  rows: Type.Integer(),
  size: Type.String({ description: 'bytes stored, in 1024 steps (`2.93 KB`)' }),
});
export const AnyRecord = Type.Record(Type.String(), Type.Unknown());
export const AnyRecords = Type.Array(AnyRecord);
export const InBodyStatus = Type.Object({
  status: Type.Integer(),
  hasError: Type.Boolean(),
  message: Type.Optional(Type.Unknown()),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// --- records of the trackers the device crawl creates ---------------------------------------------

export const InterfaceTrackerRecord = Type.Object({
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
});
export type InterfaceTrackerRecord = Static<typeof InterfaceTrackerRecord>;

export const DiskTrackerRecord = Type.Object({
  id: Type.Integer(),
  device_id: Type.Integer(),
  name: Type.String(),
  index: Type.Integer({ description: 'hrStorageIndex' }),
  freespace_oid: Type.String(),
  interval: Type.Integer({ description: 'seconds' }),
  enable_logging: Type.Boolean(),
  available: Nullable(Type.Integer({ description: 'bytes' })),
  total: Nullable(Type.Integer({ description: 'bytes' })),
});
export type DiskTrackerRecord = Static<typeof DiskTrackerRecord>;
