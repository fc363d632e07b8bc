/**
 * Shapes of the appliance settings endpoints (spec part 3, "Appliance settings"). Bodies bound
 * every string; the field rules (settings.rules.ts) answer the spec's messages for values of the
 * right type but the wrong form.
 */
import { Type } from '@sinclair/typebox';
import { HOST_NAME_TYPES, NODE_TYPES, SERVICE_ACTIONS } from './settings.rules.js';

const Nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

// ---- services ----

export const ServiceEntry = Type.Object({
  name: Type.String(),
  /** `engine`: an engine of this appliance (in its process); `systemd`: the appliance's own unit. */
  kind: Type.Union([Type.Literal('engine'), Type.Literal('systemd')]),
  /** Engine state (stopped, starting, running, stopping, failed) or the unit's ActiveState. */
  status: Type.String(),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  /** Shared resources (scheduler, storage writer) start and stop only with the appliance. */
  shared: Type.Boolean(),
  started_at: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});
export const ServicesAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  data: Type.Object({ services: Type.Array(ServiceEntry) }),
});

export const ProcmonBody = Type.Object({
  service: Type.String({ minLength: 1, maxLength: 255 }),
  action: Type.Union(SERVICE_ACTIONS.map((a) => Type.Literal(a))),
});
export const StatusMessage201 = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
});
export const RestartAnswer = Type.Object({
  status: Type.Literal(200),
  hasError: Type.Literal(false),
  message: Type.String(),
  restarted: Type.Array(Type.String()),
});

// ---- network ----

const Address = Type.Object({ address: Type.String(), netmask: Type.String() });
export const InterfaceConfig = Type.Object({
  'allow-hotplug': Type.Boolean(),
  auto: Type.Boolean(),
  type: Type.Union([
    Type.Literal('static'),
    Type.Literal('dhcp'),
    Type.Literal('manual'),
    Type.Literal('unconfigured'),
  ]),
  address: Type.Union([Type.String(), Type.Null()]),
  netmask: Type.Union([Type.String(), Type.Null()]),
  gateway: Type.Union([Type.String(), Type.Null()]),
  'dns-nameservers': Type.Array(Type.String()),
  use_sniffer: Type.Boolean(),
  use_suricata: Type.Boolean(),
});
export const NetworkInfoAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  /** `apply` or `dry-run` (APPLIANCE_NETWORK_MODE). */
  network_mode: Type.Union([Type.Literal('apply'), Type.Literal('dry-run')]),
  /** True when this request confirmed a pending network change. */
  confirmed: Type.Boolean(),
  interfaces: Type.Array(
    Type.Object({
      name: Type.String(),
      ipv4: Type.Array(Address),
      /** IPv6 addresses; `netmask` is the prefix length. */
      ipv6: Type.Array(Address),
      online: Type.Boolean(),
      config: InterfaceConfig,
    }),
  ),
});

export const SetInterfaceConfig = Type.Object({
  type: Type.String({ maxLength: 32 }),
  address: Nullable(Type.String({ maxLength: 64 })),
  netmask: Nullable(Type.String({ maxLength: 64 })),
  gateway: Nullable(Type.String({ maxLength: 64 })),
  'dns-nameservers': Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 8 })),
  auto: Type.Optional(Type.Boolean()),
  'allow-hotplug': Type.Optional(Type.Boolean()),
  use_sniffer: Type.Optional(Type.Boolean()),
  use_suricata: Type.Optional(Type.Boolean()),
});
export const SetNetworkBody = Type.Object({
  interfaces: Type.Array(
    Type.Object({ name: Type.String({ maxLength: 15 }), config: SetInterfaceConfig }),
    { minItems: 1, maxItems: 64 },
  ),
});
export const SetNetworkAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  /** True when nothing was applied (APPLIANCE_NETWORK_MODE=dry-run). */
  dry_run: Type.Boolean(),
  /** What was (or in a dry run would have been) written. */
  message: Type.String(),
  /** Seconds within which a getNetworkInfo must confirm an applied change (apply mode only). */
  confirm_within: Type.Optional(Type.Integer()),
});

// ---- hostname ----

export const HostnameAnswer = Type.Object({
  status: Type.Literal(200),
  hasError: Type.Literal(false),
  hostname: Type.String(),
});
const DNS_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
export const SetHostnameBody = Type.Object({
  hostname: Type.Optional(
    Type.String({ maxLength: 255, pattern: `^${DNS_LABEL}(?:\\.${DNS_LABEL})*$` }),
  ),
});
export const SetHostnameAnswer = Type.Object({
  status: Type.Literal(201),
  message: Type.String(),
  hostname: Type.String(),
  dry_run: Type.Boolean(),
});

// ---- host map ----

export const HostMapEntry = Type.Object({
  id: Type.Integer(),
  ip: Type.String(),
  hostname: Type.String(),
  host_name_type: Type.Union(HOST_NAME_TYPES.map((t) => Type.Literal(t))),
  node_type: Type.Union(NODE_TYPES.map((t) => Type.Literal(t))),
  timestamp: Type.String(),
});
export const HostMapPageBody = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
});
export const HostMapPageAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  data: Type.Array(HostMapEntry),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
  last_page: Type.Integer(),
});
const HostMapFields = {
  ip: Type.String({ maxLength: 64 }),
  hostname: Type.String({ maxLength: 255 }),
  host_name_type: Type.String({ maxLength: 32 }),
  node_type: Type.String({ maxLength: 32 }),
};
export const CreateHostBody = Type.Object(HostMapFields);
export const UpdateHostBody = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  ...HostMapFields,
});
export const DeleteHostBody = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});
export const HostMapAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
  data: HostMapEntry,
});

// ---- time ----

export const TimeSettingsAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  data: Type.Object({
    tzs: Type.Array(Type.String()),
    tz: Type.String(),
    type: Type.Union([Type.Literal('ntp'), Type.Literal('manual')]),
    ntpserver: Type.Optional(Type.String()),
    time: Type.Integer(),
  }),
});
export const SetTimeBody = Type.Object({
  type: Type.String({ maxLength: 16 }),
  tz: Type.String({ maxLength: 64 }),
  ntpserver: Type.Optional(Type.String({ maxLength: 2048 })),
  manual: Type.Optional(Type.String({ maxLength: 64 })),
});
export const SetTimeAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
  dry_run: Type.Boolean(),
});

// ---- license ----

export const LicenseEntry = Type.Object({
  company_name: Type.Union([Type.String(), Type.Null()]),
  user_name: Type.Union([Type.String(), Type.Null()]),
  user_email: Type.Union([Type.String(), Type.Null()]),
  activation_key: Type.String(),
  license_type: Type.String(),
  active: Type.Boolean(),
  activation_time: Type.String(),
  end_of_license: Type.Union([Type.String(), Type.Null()]),
  end_of_maintenance: Type.Union([Type.String(), Type.Null()]),
});
export const LicenseInfoAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  data: Type.Array(LicenseEntry),
});
export const ValidateLicenseBody = Type.Object({
  registrationKey: Type.String({ maxLength: 64 }),
});
export const ValidateLicenseAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.Object({ activation_key: Type.String() }),
});
