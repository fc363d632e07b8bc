/**
 * Shapes of the retention policy endpoints (spec part 3, "Data maintenance"; the retention row
 * of "Settings and maintenance records": `id`, `table`, `retention` (days), `size` (bytes)).
 */
import { Type } from '@sinclair/typebox';
import { MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../../platform/db/retention.js';

export const RetentionRowSchema = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  table: Type.String(),
  retention: Type.Integer({ minimum: MIN_RETENTION_DAYS, description: 'Days kept' }),
  size: Type.Integer({ minimum: 0, description: 'Bytes the data occupies (dbstat)' }),
});

export const RetentionPolicyAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.Array(RetentionRowSchema),
});

export const SetRetentionBody = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
      retention: Type.Integer({ minimum: MIN_RETENTION_DAYS, maximum: MAX_RETENTION_DAYS }),
    }),
    { minItems: 1, maxItems: 500 },
  ),
});

export const SetRetentionAnswer = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
});
