/**
 * TypeBox schemas of local networks (spec part 3 > Appliance settings: getLocalnets,
 * updateLocalnet, resetDiscoveryTs, deleteLocalnet; Local network record).
 */
import { Type } from '@sinclair/typebox';
import { documented } from '../../platform/http/schemas.js';

const BoolLike = Type.Unsafe<boolean | 0 | 1 | '0' | '1' | 'true' | 'false'>({
  enum: [true, false, 0, 1, '0', '1', 'true', 'false'],
  description: 'true/false, 1/0, "1"/"0", "true"/"false"',
});
export const toBool = (value: unknown): boolean =>
  value === true || value === 1 || value === '1' || value === 'true';

export const MIN_INTERVAL = 60;
export const MAX_INTERVAL = 2_592_000;
export const DEFAULT_INTERVAL = 21_600;

export const LocalnetRecord = Type.Object({
  id: Type.Integer(),
  label: Type.String(),
  network: Type.String({ description: 'first address of the range (IPv4)' }),
  broadcast: Type.String({ description: 'last address of the range (IPv4)' }),
  interval: Type.Integer({ description: 'seconds between discovery sweeps' }),
  enable_discovery: Type.Boolean(),
  enable_portscan: Type.Boolean(),
  cred_ids: Type.Array(Type.Integer(), { description: 'credential sets tried in this order' }),
  alerts: Type.Boolean(),
  timestamp: Type.Union([Type.Integer(), Type.Null()], {
    description: 'end of the last sweep (Unix seconds); null when due now',
  }),
});

export const LocalnetList = Type.Union([
  Type.Object({ data: Type.Array(LocalnetRecord) }),
  Type.Literal(false),
]);

export const LocalnetIn = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  label: Type.String({ minLength: 1, maxLength: 255 }),
  // Checked by the route (trimmed, the spec's own messages): documented only.
  network: documented(Type.String({ minLength: 1, maxLength: 15 }), { format: 'ipv4' }),
  broadcast: documented(Type.String({ minLength: 1, maxLength: 15 }), { format: 'ipv4' }),
  interval: Type.Optional(
    Type.Integer({
      minimum: MIN_INTERVAL,
      maximum: MAX_INTERVAL,
      description: `seconds; default ${DEFAULT_INTERVAL} on create`,
    }),
  ),
  enable_discovery: Type.Optional(BoolLike),
  enable_portscan: Type.Optional(BoolLike),
  alerts: Type.Optional(BoolLike),
  cred_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 50 })),
});

export const UpdateLocalnetBody = Type.Object({
  data: Type.Array(LocalnetIn, { minItems: 1, maxItems: 256 }),
});
export const LocalnetSaved = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
  data: Type.Array(LocalnetRecord),
});
export const LocalnetIdBody = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export const LegacyDone = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
});
