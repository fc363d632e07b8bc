/**
 * The alerting feature (spec part 3 > Alerting; docs/features/alerting.md). What others use:
 *
 * - The legacy alert catalogue, which this feature owns: trackers create their alerts
 *   (`toggleAlert`, `ensureLegacyAlert`), read them for their `alerts` sections (`alertsOf`,
 *   `alertsOfDevices`, `alertRecord`) and record what their pollers saw (`observeAlertState`,
 *   which writes a firing that this feature's engine routes and delivers).
 * - `createAlerts(ctx, deps)`: builds the feature (composition root only): the service, the
 *   evaluation engine, the device deletion clean-up and the routes; `connectDelivery(seam)`
 *   plugs in features/alerts/delivery (queue, renderer, outbound-address check).
 */
export {
  alertEvents,
  alertRecord,
  alertsOf,
  alertsOfDevices,
  DEVICE_DOWN_ALERT,
  deleteAlertsOf,
  deleteLegacyAlertsOfDevice,
  ensureLegacyAlert,
  findAlert,
  observeAlertState,
  toggleAlert,
  URL_DOWN_ALERT,
  type AlertRow,
  type TrackerKind,
} from './legacy-alerts.repository.js';
export { createAlerts, type Alerts } from './alerts-feature.service.js';
export { LegacyAlertSummary } from './alerts.schema.js';
export type { DeliveryQueue, DeliverySeam, Notification, OutletTarget } from './alerts.service.js';
