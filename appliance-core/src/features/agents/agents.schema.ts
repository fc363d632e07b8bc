/**
 * TypeBox schemas of the agent endpoints (spec part 2 "Agent installer", "Agent probes", "Agent
 * administration") and of the designed POST /api/agent/results (docs/agent-protocol.md §5).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IdParam, IP_ADDRESS_RULE, documented } from '../../platform/http/schemas.js';
import { ADOPTION_KEY, AGENT_UUID, HOSTNAME } from './agent-protocol.rules.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Arch = Type.Union([Type.Literal('amd64'), Type.Literal('arm64')]);

// --- enrollment tokens ---------------------------------------------------------------------------

export const CreateTokenBody = Type.Object({
  label: Type.Optional(Type.String({ maxLength: 255 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 })),
  ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 2592000 })),
  single_use: Type.Optional(Type.Boolean()),
});
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const TokenRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  tags: Type.Array(Type.String()),
  ttl_seconds: Type.Integer(),
  single_use: Type.Boolean(),
  expires_at: Type.String({ description: 'UTC, `YYYY-MM-DD HH:MM:SS`' }),
  consumed_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.Integer()),
});
export const CreatedToken = Type.Composite([
  TokenRecord,
  Type.Object({ token: Type.String({ description: 'The plaintext token: shown only here' }) }),
]);
export const TokenList = Type.Array(TokenRecord);
export const TokenParams = Type.Object({ id: IdParam() });
export const Revoked = Type.Object({ revoked: Type.Literal(true) });

// --- enroll, check-in, results -------------------------------------------------------------------

const AgentFacts = {
  agent_uuid: Type.String({ pattern: AGENT_UUID, minLength: 8, maxLength: 64 }),
  hostname: Type.String({ pattern: HOSTNAME, minLength: 1, maxLength: 255 }),
  agent_version: Type.Optional(Type.String({ maxLength: 64 })),
  os_version: Type.Optional(Type.String({ maxLength: 128 })),
  arch: Type.Optional(Arch),
};
const EnrollmentToken = Type.String({ minLength: 32, maxLength: 128 });

export const EnrollBody = Type.Object({ token: EnrollmentToken, ...AgentFacts });
export type EnrollBody = Static<typeof EnrollBody>;
export const CheckinBody = Type.Object({
  ...AgentFacts,
  token: Type.Optional(EnrollmentToken),
  override: Type.Optional(
    Type.Boolean({ description: 'The retry after a 409 (docs/agent-protocol.md §3)' }),
  ),
});
export type CheckinBody = Static<typeof CheckinBody>;

export const KeyBundle = Type.Object({
  server_id: Type.String(),
  server_url: Type.String(),
  public_key: Type.String({ description: 'b64u raw Ed25519 public key of the appliance' }),
  allowed_source_ips: Type.Array(Type.String()),
  device_id: Type.Integer(),
  update: Type.Optional(
    Type.Object({
      version: Type.String(),
      url: Type.String(),
      sha256: Type.String(),
      signature: Type.String(),
    }),
  ),
});
export type KeyBundle = Static<typeof KeyBundle>;
export const PendingAnswer = Type.Object({
  status: Type.Literal('pending'),
  message: Type.String(),
});

export const ResultBody = Type.Object({
  agent_uuid: Type.String({ pattern: AGENT_UUID, minLength: 8, maxLength: 64 }),
  request_id: Type.String({ minLength: 1, maxLength: 64 }),
  ok: Type.Boolean(),
  data: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String({ maxLength: 1000 })),
});
export type ResultBody = Static<typeof ResultBody>;

// --- adoption -------------------------------------------------------------------------------------

export const AdoptBody = Type.Object({
  ip_address: documented(Type.String({ minLength: 1, maxLength: 64 }), IP_ADDRESS_RULE),
  token: Type.String({ pattern: ADOPTION_KEY, minLength: 10, maxLength: 64 }),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  profile: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 })),
});
export type AdoptBody = Static<typeof AdoptBody>;
export const Adopted = Type.Object({
  device_id: Type.Integer(),
  agent_uuid: Type.String(),
  enrolled: Type.Boolean(),
});

// --- download -------------------------------------------------------------------------------------

export const DownloadQuery = Type.Object({
  arch: Type.Optional(Type.String({ maxLength: 16, description: '`amd64` (default) or `arm64`' })),
  expires: Type.Optional(Type.String({ maxLength: 16, description: 'signed URL: expiry, UTC ms' })),
  sig: Type.Optional(Type.String({ maxLength: 64, description: 'signed URL: signature' })),
});
export const Binary = Type.Unsafe<unknown>({ type: 'string', format: 'binary' });

// --- probes ---------------------------------------------------------------------------------------

const DeviceRef = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const DeviceIdBody = Type.Object({ device_id: DeviceRef });
export const DeviceidBody = Type.Object({ deviceid: DeviceRef });
export const PathBody = Type.Object({
  deviceid: DeviceRef,
  path: Type.String({ minLength: 1, maxLength: 4096, description: 'absolute path' }),
});
export const AgentIdBody = Type.Object({
  device_id: Type.Optional(DeviceRef),
  ip_address: Type.Optional(documented(Type.String({ maxLength: 64 }), IP_ADDRESS_RULE)),
});

export const Process = Type.Object({
  pid: Type.Integer(),
  ppid: Type.Integer(),
  name: Type.String(),
  user: Type.String(),
  state: Type.String(),
  cpu_percent: Type.Number(),
  memory_bytes: Type.Number(),
  command: Type.String(),
});
export const Service = Type.Object({
  Name: Type.String(),
  State: Type.String(),
  DisplayName: Type.String(),
});
export const Usage = Type.Object({
  path: Type.String(),
  size: Type.Number(),
  children: Type.Array(Type.Unknown(), { description: 'the same objects, nested' }),
});
export const Listed = <T extends TSchema>(message: T) =>
  Type.Object({ status: Type.Literal(201), message });
export const AgentIdAnswer = Type.Object({ status: Type.Literal(200), message: Type.String() });
