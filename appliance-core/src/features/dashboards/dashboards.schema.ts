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

/** Read loosely on purpose: any problem answers the one 400 `Invalid parameter` the spec lists. */
export const AddWidgetBody = Type.Object(
  { dashboardName: Type.Optional(Type.Unknown()), widget: Type.Optional(Type.Unknown()) },
  {
    description:
      '`dashboardName`: non-empty string (max 255); `widget`: object with a positive integer `widgetId` (other keys kept)',
  },
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
