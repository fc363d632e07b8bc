import { Type, type Static } from '@sinclair/typebox';

// spec: part3 > Resources and their fields > Capture (plus the designed engine, reason, ...)
export const CaptureFilterSchema = Type.Object(
  {
    hosts: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })),
    ports: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { maxItems: 64 }),
    ),
    protocols: Type.Optional(
      Type.Array(Type.Union([Type.Literal('tcp'), Type.Literal('udp'), Type.Literal('icmp')]), {
        maxItems: 3,
      }),
    ),
    vlans: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 4095 }), { maxItems: 64 })),
    ifaces: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { maxItems: 16 }),
    ),
  },
  { additionalProperties: false },
);

export const CreateCaptureBody = Type.Object({
  label: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  device_id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  byte_cap: Type.Optional(Type.Integer({ minimum: 65536, maximum: 1073741824, default: 10485760 })),
  deadline_s: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, default: 600 })),
  ephemeral: Type.Optional(Type.Boolean({ default: false })),
  filter: CaptureFilterSchema,
});
export type CreateCaptureBody = Static<typeof CreateCaptureBody>;

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const CaptureRecord = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  device_id: Type.Union([Type.Integer(), Type.Null()]),
  label: Type.Union([Type.String(), Type.Null()]),
  filter: CaptureFilterSchema,
  status: Type.Union(
    ['starting', 'running', 'stopped', 'expired', 'failed'].map((s) => Type.Literal(s)),
  ),
  started_at: Time,
  ended_at: Time,
  expires_at: Time,
  packets: Type.Integer(),
  bytes: Type.Integer({ description: 'bytes of pcapng written (what byte_cap bounds)' }),
  byte_cap: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  deadline_s: Type.Integer(),
  ephemeral: Type.Boolean(),
  ifaces: Type.Array(Type.String(), { description: 'the interfaces the capture opened' }),
  engine: Type.Union([Type.Literal('dumpcap'), Type.Literal('cap'), Type.Null()], {
    description: 'the engine that captured (docs/features/captures.md states their limits)',
  }),
  drops: Type.Union([Type.Integer(), Type.Null()], {
    description: "packets dropped, from the engine's counter (dumpcap); null when it keeps none",
  }),
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'why the capture ended: stopped, byte-cap, deadline, idle, device-deleted, shutdown, restart, or the engine error',
  }),
});
export type CaptureRecord = Static<typeof CaptureRecord>;

export const CaptureEnvelope = Type.Object({ capture: CaptureRecord });
export const CaptureList = Type.Object({ captures: Type.Array(CaptureRecord) });
export const InterfaceList = Type.Object({ interfaces: Type.Array(Type.String()) });
export const DeletedBody = Type.Object({ status: Type.Literal('ok') });

/** The id as text: anything but a plain decimal id is the same 404 as a missing capture. */
export const CaptureIdParams = Type.Object({ id: Type.String({ maxLength: 4096 }) });
export const ChunksQuery = Type.Object({
  since: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

export const ChunksBody = Type.Object({
  status: CaptureRecord.properties.status,
  last_seq: Type.Integer(),
  pcapng_shb: Type.Optional(Type.String({ contentEncoding: 'base64' })),
  chunks: Type.Array(
    Type.Object({ seq: Type.Integer(), data: Type.String({ contentEncoding: 'base64' }) }),
  ),
});

export const NotFoundBody = Type.Object(
  { status: Type.Literal('error'), message: Type.String() },
  { description: "{status: 'error', message: 'not found'}" },
);
export const StatusErrorBody = Type.Object({
  status: Type.Literal('error'),
  reason: Type.Optional(Type.String()),
  message: Type.String(),
});
