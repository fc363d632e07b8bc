/**
 * TypeBox schemas of dashboards and device layouts (spec part 2 > Dashboards and layouts).
 * Dashboards, layouts and pinned widgets are the console's free-form JSON.
 */
import { Type } from '@sinclair/typebox';

export const JsonObject = Type.Record(Type.String(), Type.Unknown());
const JsonValue = Type.Union([JsonObject, Type.Array(Type.Unknown())]);

export const Dashboards = Type.Object({ dashboards: JsonObject, layouts: JsonObject });
export const SetDashboardsBody = Type.Object({ dashboards: JsonObject, layouts: JsonObject });
export const Message = Type.Object({ message: Type.String() });

/** The spec's one failure text of addWidgetToDash, for every problem with its body. */
export const INVALID_PARAMETER = 'Invalid parameter';
const invalid = { errorMessage: INVALID_PARAMETER };
const DeviceRef = {
  type: ['integer', 'null'],
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'a device the caller can see',
  ...invalid,
};

/**
 * The rules are in the schema (so /openapi.json states them), and every problem answers the one
 * 400 `Invalid parameter` the spec lists (`errorMessage`). The widget keeps every key it is sent:
 * `patternProperties` matches them all, so the validator's removal of undeclared properties
 * leaves them in place.
 */
export const AddWidgetBody = Type.Object(
  {
    dashboardName: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', ...invalid }),
    widget: Type.Unsafe<Record<string, unknown> & { widgetId: number }>({
      type: 'object',
      description: 'The widget as the console stores it; other keys are kept as sent',
      properties: {
        widgetId: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...invalid },
        deviceId: DeviceRef,
        device_id: DeviceRef,
      },
      required: ['widgetId'],
      patternProperties: { '': {} },
      ...invalid,
    }),
  },
  // A body that is not an object keeps the generic text; a missing field is `Invalid parameter`.
  { errorMessage: { required: INVALID_PARAMETER } },
);
export const WidgetAdded = Type.Object({ status: Type.Literal('success') });

export const DeviceTrackersQuery = Type.Object({ deviceId: Type.Integer({ minimum: 1 }) });
export const DeviceTrackers = Type.Object({
  hasError: Type.Literal(false),
  trackers: Type.Array(
    Type.Object({
      trackerId: Type.Integer(),
      trackerTable: Type.String(),
      widgetId: Type.Integer(),
      w: Type.Integer(),
      h: Type.Integer(),
    }),
  ),
  layouts: JsonValue,
  pinnedWidgets: JsonValue,
});

export const SetDeviceLayoutsBody = Type.Object({
  deviceId: Type.Integer({ minimum: 1 }),
  layouts: JsonValue,
});
export const SetPinnedWidgetsBody = Type.Object({
  deviceId: Type.Integer({ minimum: 1 }),
  pinnedWidgets: JsonValue,
});
export const DeviceIdBody = Type.Object({ deviceId: Type.Integer({ minimum: 1 }) });
export const LayoutSaved = Type.Object({ hasError: Type.Literal(false), message: Type.String() });
