/**
 * TypeBox schemas of the device inventory (spec part 2 > Resources, Device inventory, Tags and
 * profiles, Autodiscovery credentials, Pending devices, Network tools > SNMP walks).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { documented, IdParam, IP_ADDRESS_RULE } from '../../platform/http/schemas.js';
import {
  AUTH_PROTOCOLS,
  PRIV_PROTOCOLS,
  V3_SECURITY_LEVELS,
} from '../../platform/snmp/snmp.client.js';

// --- shared pieces ------------------------------------------------------------------------

export const Sentinel = Type.Object(
  { __encrypted__: Type.Literal(true) },
  { description: 'The encrypted-field sentinel' },
);
/**
 * A secret on write: new plaintext, the sentinel or an empty value (keep), or null (keep). One
 * schema with a type list rather than a union, so a bad value gets one message, not one per branch.
 */
export const SecretIn = Type.Unsafe<string | { __encrypted__: true } | null>({
  type: ['string', 'object', 'null'],
  maxLength: 255,
  properties: { __encrypted__: { const: true } },
  required: ['__encrypted__'],
  description:
    'new plaintext; the sentinel {"__encrypted__": true}, "" or null keep the stored secret',
});
/** A secret on read: the sentinel when one is stored, else null. */
export const SecretOut = Type.Union([Sentinel, Type.Null()]);
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A string or null on write, as one schema (one message when wrong). */
const NullableString = (options: { maxLength: number; description?: string }) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });

/** Booleans as clients send them (true/false, 1/0, "1"/"0", "true"/"false"); one enum, so one message. */
export const BoolLike = Type.Unsafe<boolean | 0 | 1 | '0' | '1' | 'true' | 'false'>({
  enum: [true, false, 0, 1, '0', '1', 'true', 'false'],
  description: 'true/false, 1/0, "1"/"0", "true"/"false"',
});
export type BoolLike = Static<typeof BoolLike>;
export const toBool = (value: BoolLike): boolean =>
  value === true || value === 1 || value === '1' || value === 'true';

export const TagSlug = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$',
  description: 'Letters, digits, `_ . : -`; max 64',
});
export const TagRecord = Type.Object({
  id: Type.Integer(),
  slug: Type.String(),
  name: Type.String(),
  type: Type.String(),
});
export const DeviceTag = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  type: Type.String(),
});
export type DeviceTag = Static<typeof DeviceTag>;
const TagObject = Type.Object({
  slug: TagSlug,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  type: Type.Optional(Type.Literal('device')),
});
/** A tag on write: `{slug, name, type: 'device'}` (name defaults to the slug), or just the slug; one schema, one message. */
export const TagIn = Type.Unsafe<string | Static<typeof TagObject>>({
  ...TagObject,
  type: ['string', 'object'],
  minLength: 1,
  maxLength: 64,
  pattern: TagSlug.pattern,
  description: '`{slug, name, type: "device"}` or a slug',
});
export type TagIn = Static<typeof TagIn>;
export const TagsIn = Type.Array(TagIn, { maxItems: 100 });

// --- SNMP configuration ---------------------------------------------------------------------

export const SnmpConfigIn = Type.Object(
  {
    snmp_version: Type.Optional(
      Type.Unsafe<1 | 2 | 3 | '1' | '2' | '2c' | '3'>({
        enum: [1, 2, 3, '1', '2', '2c', '3'],
        description: '1, 2 (2c) or 3',
      }),
    ),
    snmp_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    snmp_community: Type.Optional(SecretIn),
    snmp_v3_security: Type.Optional(
      Type.Unsafe<(typeof V3_SECURITY_LEVELS)[number] | null>({
        enum: [...V3_SECURITY_LEVELS, null],
      }),
    ),
    authuser: Type.Optional(NullableString({ maxLength: 255 })),
    authpass: Type.Optional(SecretIn),
    authprot: Type.Optional(
      NullableString({
        maxLength: 16,
        description: `${AUTH_PROTOCOLS.join(', ')} (case and dashes ignored)`,
      }),
    ),
    privpass: Type.Optional(SecretIn),
    privprot: Type.Optional(
      NullableString({
        maxLength: 16,
        description: `${PRIV_PROTOCOLS.join(', ')} (AES-128 = AES, AES-256 = AES256B)`,
      }),
    ),
  },
  {
    description:
      'SNMP settings; v1/v2: snmp_community; v3: snmp_v3_security, authuser, authpass, authprot, privpass, privprot',
  },
);
/** snmpconfig may also be null (ignored): one schema with a type list. */
export const SnmpConfigInOrNull = Type.Unsafe<Static<typeof SnmpConfigIn> | null>({
  ...SnmpConfigIn,
  type: ['object', 'null'],
});
export type SnmpConfigIn = Static<typeof SnmpConfigIn>;

export const SnmpConfigOut = Type.Object({
  snmp_version: Type.Integer(),
  snmp_port: Type.Integer(),
  snmp_community: SecretOut,
  snmp_v3_security: Nullable(Type.String()),
  authuser: Nullable(Type.String()),
  authpass: SecretOut,
  authprot: Nullable(Type.String()),
  privpass: SecretOut,
  privprot: Nullable(Type.String()),
});
export type SnmpConfigOut = Static<typeof SnmpConfigOut>;

// --- walks ----------------------------------------------------------------------------------

export const DecodedVarbind = Type.Object({
  oid: Type.String(),
  type: Type.String(),
  value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
});
export const WalkSummary = Type.Object({
  id: Type.Integer(),
  device_id: Type.Integer(),
  timestamp: Type.String({ description: 'ISO 8601 (UTC)' }),
  kind: Type.Union([Type.Literal('crawl'), Type.Literal('live')], {
    description: '`crawl` (device crawl) or `live` (getSNMPWalkInfo)',
  }),
  oid_count: Type.Integer(),
  duration_ms: Type.Integer(),
  truncated: Type.Boolean(),
});
export const WalkRecord = Type.Composite([
  WalkSummary,
  Type.Object({ varbinds: Type.Array(DecodedVarbind) }),
]);
export type WalkRecord = Static<typeof WalkRecord>;

// --- device records -------------------------------------------------------------------------

const deviceFields = {
  id: Type.Integer(),
  label: Type.String(),
  ip_address: Type.String(),
  profile: Type.String(),
  enable_snmp: Type.Boolean(),
  enable_agent: Type.Boolean(),
  enable_netflow: Type.Boolean(),
  enable_port_monitor: Type.Boolean(),
  agent_uuid: Nullable(Type.String()),
  tags: Type.Array(DeviceTag),
};

/** Schemas of the data other features provide to device records (see DevicesService). */
export type ProvidedSchemas = Partial<Record<string, TSchema>>;

const relationDescription = 'present when requested with the query flag of the same name';
const relation = (provided: ProvidedSchemas, name: string, fallback: TSchema, what?: string) => {
  const description = what ? `${relationDescription}: ${what}` : relationDescription;
  return Type.Optional(provided[name] ? Type.Unsafe({ ...provided[name], description }) : fallback);
};

/**
 * GET /api/devices: device records with the relations their query flags ask for, each typed by
 * the feature that provides it (an unprovided relation answers its empty value).
 */
export function deviceListBody(relations: ProvidedSchemas) {
  const record = Type.Object({
    ...deviceFields,
    alerts: relation(relations, 'alerts', Type.Array(Type.Unknown())),
    ping: relation(relations, 'ping', Type.Null(), 'the latency tracker or null'),
    oids: relation(relations, 'oids', Type.Array(Type.Unknown())),
    // Typed unknown for the handler like the provided relations (loaders answer unknown values).
    walks: Type.Optional(
      Type.Unsafe<unknown>(Type.Array(WalkSummary, { description: relationDescription })),
    ),
    interfaces: relation(relations, 'interfaces', Type.Array(Type.Unknown()), 'interface trackers'),
    ports: relation(relations, 'ports', Type.Array(Type.Unknown())),
    disks: relation(relations, 'disks', Type.Array(Type.Unknown()), 'disk trackers'),
  });
  return Type.Object({ status: Type.Literal(200), devices: Type.Array(record) });
}

/**
 * GET /api/device/{device}: the device with its SNMP configuration (masked) and the sections
 * other features provide for a time window, each typed by its provider.
 */
export function deviceDetailBody(sections: ProvidedSchemas) {
  const section = (name: string, description: string) =>
    sections[name]
      ? Type.Unsafe({ ...sections[name], description })
      : Type.Array(Type.Unknown(), { description });
  const device = Type.Object({
    ...deviceFields,
    alerts: section('alerts', 'alerts of the device’s trackers'),
    snmpconfig: SnmpConfigOut,
    syslogconfig: Type.Object({ severity: Nullable(Type.Integer()) }),
    netflow: Type.Object({
      bytes: Type.Integer(),
      count: Type.Integer(),
      top_partners: Type.Array(
        Type.Object({
          ip: Type.String(),
          device_id: Type.Union([Type.Integer(), Type.Null()]),
          host: Type.Union([Type.String(), Type.Null()]),
          bytes: Type.Integer(),
        }),
        {
          description: 'the addresses this device exchanged most bytes with in the window (flows)',
        },
      ),
    }),
    ping: section('ping', 'latency readings in the window'),
    oids: section('oids', 'OID trackers with their readings in the window'),
    interfaces: section('interfaces', 'interface trackers with `logs` in the window'),
    ports: section('ports', 'port trackers with their readings in the window'),
    disks: section('disks', 'disk trackers with `logs` in the window'),
    window: Type.Object(
      { start_time: Type.String(), end_time: Type.String() },
      { description: 'the effective window (ISO 8601, UTC)' },
    ),
  });
  return Type.Object({ status: Type.Literal(200), device });
}

// --- requests -------------------------------------------------------------------------------

export const DeviceParams = Type.Object({ device: IdParam() });
export const DeviceTextParams = Type.Object({ device: Type.String({ maxLength: 32 }) });

export const DeviceListQuery = Type.Object({
  tag: Type.Optional(Type.String({ maxLength: 64 })),
  status: Type.Optional(Type.Union([Type.Literal('up'), Type.Literal('down')])),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  alerts: Type.Optional(BoolLike),
  ping: Type.Optional(BoolLike),
  oids: Type.Optional(BoolLike),
  walks: Type.Optional(BoolLike),
  interfaces: Type.Optional(BoolLike),
  ports: Type.Optional(BoolLike),
  disks: Type.Optional(BoolLike),
});
export type DeviceListQuery = Static<typeof DeviceListQuery>;

/** GET /api/devices/status: the list filters without relations. */
export const DeviceStatusQuery = Type.Pick(DeviceListQuery, ['tag', 'status', 'search']);

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** GET /api/devices/status: columns of equal length, index i describing one device. */
export const DeviceStatusBody = Type.Object({
  status: Type.Literal(200),
  devices: Type.Object(
    {
      id: Type.Array(Type.Integer()),
      reachability: Type.Array(nullable(Type.Union([Type.Literal('up'), Type.Literal('down')])), {
        description: 'from the latency tracker; null before the first reading or without one',
      }),
      icmping_id: Type.Array(nullable(Type.Integer()), {
        description: 'the device’s latency tracker, null without one',
      }),
      latency: Type.Array(nullable(Type.Number()), { description: 'milliseconds, latest reading' }),
      loss: Type.Array(nullable(Type.Number()), { description: 'percent, latest reading' }),
    },
    { description: 'one array per column, in device id order' },
  ),
});

export const DeviceWindowQuery = Type.Object({
  hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 8760, default: 8 })),
  start_time: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  end_time: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
});

/** The profile catalogue (seeded by the first migration; no route adds one). */
export const PROFILE_SLUGS = [
  'dash_appliance',
  'dash_generic',
  'dash_network_snmp',
  'dash_linux_snmp',
  'dash_windows_wmi',
] as const;

export const DeviceSetBody = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  // Checked by the service (trimmed, canonical form, every field's error at once): documented only.
  ip_address: documented(Type.String({ minLength: 1, maxLength: 64 }), IP_ADDRESS_RULE),
  label: Type.String({ minLength: 1, maxLength: 255 }),
  profile: documented(Type.String({ minLength: 1, maxLength: 64 }), { enum: PROFILE_SLUGS }),
  enable_snmp: Type.Optional(BoolLike),
  enable_agent: Type.Optional(BoolLike),
  enable_netflow: Type.Optional(BoolLike),
  enable_port_monitor: Type.Optional(BoolLike),
  agent_uuid: Type.Optional(NullableString({ maxLength: 64 })),
  snmpconfig: Type.Optional(SnmpConfigInOrNull),
  tags: Type.Optional(TagsIn),
});
export type DeviceSetBody = Static<typeof DeviceSetBody>;

export const DeviceSaved = Type.Object({
  status: Type.Literal(200),
  message: Type.String(),
  device: Type.Object({ id: Type.Integer(), tags: Type.Array(DeviceTag) }),
});

export const StatusMessage = (status: number) =>
  Type.Object({ status: Type.Literal(status), message: Type.String() });

export const DeleteDeviceBody = Type.Object({ device: Type.Integer({ minimum: 1 }) });
export const LegacyDeleted = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.Literal(true),
});

export const DeviceStatsRow = Type.Object({
  log_name: Type.String(),
  total_rows: Type.Integer(),
  size: Type.Integer({ description: 'bytes' }),
  formatted: Type.String(),
});
export const DeviceStats = Type.Array(DeviceStatsRow);

export const TestSnmpBody = Type.Object({
  ip: documented(Type.String({ minLength: 1, maxLength: 64 }), IP_ADDRESS_RULE),
  snmpconfig: SnmpConfigIn,
  device_id: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1 })),
});
export const TestSnmpResult = Type.Object({
  status: Type.Union([Type.Literal(200), Type.Literal(301)]),
  message: Type.String(),
});

// --- tags and profiles ----------------------------------------------------------------------

export const TagList = Type.Object({ status: Type.Literal(200), tags: Type.Array(TagRecord) });
export const DeviceTagList = Type.Object({
  status: Type.Literal(200),
  tags: Type.Array(DeviceTag),
});
export const AddTagsBody = Type.Object({
  tags: Type.Array(
    Type.Object({
      slug: TagSlug,
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      type: Type.Optional(Type.Literal('device')),
    }),
    { minItems: 1, maxItems: 100 },
  ),
});
export const RemoveTagsBody = Type.Object({
  tags: Type.Array(Type.Object({ slug: Type.String({ minLength: 1, maxLength: 64 }) }), {
    minItems: 1,
    maxItems: 100,
  }),
});
export const ProfileRecord = Type.Object({
  id: Type.Integer(),
  profile: Type.String(),
  layout: Type.Unknown({ description: 'default dashboard layout (JSON)' }),
});
export const ProfileList = Type.Object({
  status: Type.Literal(200),
  profiles: Type.Array(ProfileRecord),
});

// --- autodiscovery credentials --------------------------------------------------------------

export const CredentialRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  authuser: Type.String(),
  snmp_authprot: Type.String(),
  snmp_privprot: Type.String(),
  snmp_community: SecretOut,
  authpass: SecretOut,
  snmp_privpass: SecretOut,
  snmp_port: Type.Integer({
    description: 'UDP port the discovery sweep uses with this set (default 161)',
  }),
});
export const CredentialList = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  data: Type.Array(CredentialRecord),
});
export const AddEditCredentialBody = Type.Object({
  action: Type.String({ minLength: 1, maxLength: 16 }),
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  label: Type.Optional(Type.String({ maxLength: 255 })),
  authuser: Type.Optional(Type.String({ maxLength: 255 })),
  snmp_authprot: Type.Optional(Type.String({ maxLength: 16 })),
  snmp_privprot: Type.Optional(Type.String({ maxLength: 16 })),
  snmp_community: Type.Optional(SecretIn),
  authpass: Type.Optional(SecretIn),
  snmp_privpass: Type.Optional(SecretIn),
  snmp_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
});
export type AddEditCredentialBody = Static<typeof AddEditCredentialBody>;
export const CredentialSaved = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  credential: Type.Object({ id: Type.Integer(), label: Type.String() }),
});
export const LegacyMessage = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
});

// --- pending devices ------------------------------------------------------------------------

export const PendingRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  ip_address: Type.String(),
  profile: Type.String(),
  enable_snmp: Type.Boolean(),
  enable_agent: Type.Boolean(),
  agent_uuid: Nullable(Type.String()),
  last_checkin_at: Nullable(Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' })),
  agent_version: Nullable(Type.String()),
  os_version: Nullable(Type.String()),
  tags: Type.Array(DeviceTag),
  snmpconfig: SnmpConfigOut,
  open_ports: Nullable(
    Type.Array(Type.Integer(), { description: 'open TCP ports found by a discovery portscan' }),
  ),
});
export type PendingRecord = Static<typeof PendingRecord>;
export const DiscoveryStatusRecord = Type.Object({
  id: Type.Integer(),
  net_id: Type.Integer(),
  start_time: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  end_time: Nullable(
    Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC); null while the sweep runs' }),
  ),
});
export type DiscoveryStatusRecord = Static<typeof DiscoveryStatusRecord>;
export const PendingList = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  devices: Type.Array(PendingRecord),
  discovery_status: Type.Array(DiscoveryStatusRecord),
});
export const PendingIdBody = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const ImportPendingBody = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  tags: Type.Optional(TagsIn),
});
export const PENDING_FIELDS = [
  'label',
  'profile',
  'enable_snmp',
  'enable_agent',
  'snmp_community',
  'snmp_port',
  'snmp_version',
  'snmp_v3_security',
  'authuser',
  'authpass',
  'authprot',
  'privpass',
  'privprot',
] as const;
export type PendingField = (typeof PENDING_FIELDS)[number];
export const UpdatePendingFieldBody = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  field: Type.Union(PENDING_FIELDS.map((f) => Type.Literal(f))),
  value: Type.Union([
    Type.String({ maxLength: 255 }),
    Type.Number(),
    Type.Boolean(),
    Sentinel,
    Type.Null(),
  ]),
});
export const UpdatePendingTagsBody = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  tags: TagsIn,
});

// --- walks ----------------------------------------------------------------------------------

export const WalkTargetParams = Type.Object({ target: Type.String({ maxLength: 32 }) });
export const LiveWalkResult = Type.Object({ status: Type.Literal(201), message: WalkRecord });
export const LastWalkResult = Type.Object({
  status: Type.Literal(201),
  walk: Nullable(WalkRecord),
});
