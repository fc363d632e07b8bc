/**
 * POST /api/smtpSettings (spec part 3 > Appliance settings): one endpoint, `action` get, set or
 * test, HTTP 200 with `hasError` on failure.
 */
import { Type, type Static } from '@sinclair/typebox';

const Flag = Type.Unsafe<boolean | 0 | 1>({
  anyOf: [{ type: 'boolean' }, { type: 'integer', enum: [0, 1] }],
  description: 'true or false (1 or 0 accepted)',
});

export const SmtpSettingsBody = Type.Object(
  {
    action: Type.Union([Type.Literal('get'), Type.Literal('set'), Type.Literal('test')]),
    sender: Type.Optional(
      Type.String({ maxLength: 255, description: "The sender's display name" }),
    ),
    email: Type.Optional(
      Type.String({
        maxLength: 320,
        description: 'The From address; test mails go here unless `to` is sent',
      }),
    ),
    smtpserver: Type.Optional(
      Type.String({ maxLength: 253, description: 'Relay host name or address' }),
    ),
    port: Type.Optional(
      Type.Unsafe<number | string>({
        anyOf: [
          { type: 'integer', minimum: 1, maximum: 65535 },
          { type: 'string', pattern: '^[0-9]{1,5}$' },
        ],
        description: 'Relay port, 1 to 65535',
      }),
    ),
    auth: Type.Optional(Flag),
    usessl: Type.Optional(Flag),
    authname: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    authpass: Type.Optional(
      Type.Unsafe<string | { __encrypted__: true } | null>({
        type: ['string', 'object', 'null'],
        maxLength: 1024,
        properties: { __encrypted__: { const: true } },
        required: ['__encrypted__'],
        description:
          'new plaintext; the sentinel {"__encrypted__": true}, "" or null keep the stored password',
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 320,
        description: 'test only (designed): the recipient of the test mail',
      }),
    ),
  },
  { additionalProperties: true },
);
export type SmtpSettingsInput = Static<typeof SmtpSettingsBody>;

const Sentinel = Type.Object({ __encrypted__: Type.Literal(true) });

export const SmtpView = Type.Object({
  sender: Type.String(),
  email: Type.String(),
  server: Type.String(),
  port: Type.Integer(),
  auth: Type.Boolean(),
  usessl: Type.Boolean(),
  authname: Type.String(),
  authpass: Type.Union([Sentinel, Type.Null()], {
    description: 'the sentinel when a password is stored',
  }),
});
export type SmtpViewRecord = Static<typeof SmtpView>;

export const SmtpSettingsAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  smtp: Type.Union([SmtpView, Type.String()], {
    description:
      '`get`: the settings (password masked); `set` and `test`: a text saying what was done',
  }),
});
