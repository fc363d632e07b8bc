/**
 * Shapes of the daemon endpoints (spec part 3, "Data maintenance"; the daemon record of
 * "Settings and maintenance records": `id`, `name`, `start_auto`, `config` of `{var, value}`).
 * A secret's value reads as the encrypted-field sentinel `{"__encrypted__": true}`.
 */
import { Type } from '@sinclair/typebox';

const Sentinel = Type.Object(
  { __encrypted__: Type.Literal(true) },
  { description: 'A stored secret (never returned); sent back, it keeps the secret' },
);

export const DaemonParams = Type.Object({
  identifier: Type.String({ minLength: 1, maxLength: 64, description: 'Numeric id or name' }),
});
export const DaemonIdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'Numeric id (or name)' }),
});

export const DaemonAnswer = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  start_auto: Type.Boolean(),
  config: Type.Array(
    Type.Object({ var: Type.String(), value: Type.Union([Type.String(), Sentinel]) }),
  ),
});

export const DaemonCatalogueAnswer = Type.Object({
  daemons: Type.Array(
    Type.Object({
      ...DaemonAnswer.properties,
      vars: Type.Array(
        Type.Object({
          var: Type.String(),
          secret: Type.Boolean({ description: 'Stored sealed; reads back as the sentinel' }),
          description: Type.String(),
        }),
        { description: 'The variables the daemon accepts; any other is refused (422)' },
      ),
    }),
  ),
});

export const DaemonConfigBody = Type.Object({
  config: Type.Array(
    Type.Object({
      var: Type.String({ minLength: 1, maxLength: 64 }),
      value: Type.Union([
        Type.String({ maxLength: 1024 }),
        Type.Number(),
        Type.Boolean(),
        Type.Null(),
        Sentinel,
      ]),
    }),
    { maxItems: 100, description: 'Complete replacement: a variable left out is removed' },
  ),
});

export const DaemonStartBody = Type.Object({
  start_auto: Type.Boolean({ description: 'Whether the daemon starts with the appliance' }),
});

export const MessageAnswer = Type.Object({ message: Type.String() });
export const ReloadFailedAnswer = Type.Object({
  message: Type.String(),
  reload_failed: Type.Literal(true),
});
