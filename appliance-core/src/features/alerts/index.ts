/**
 * The alerting feature (spec part 3 > Alerting; docs/features/alerting.md). What others use:
 *
 * - The legacy alert catalogue, which this feature owns: trackers create their alerts
 *   (`toggleAlert`, `ensureLegacyAlert`), read them for their `alerts` sections (`alertsOf`,
 *   `alertsOfDevices`, `alertRecord`) and record what their pollers saw (`observeAlertState`,
 *   which writes a firing that this feature's engine routes and delivers).
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
  type AlertRow,
  type TrackerKind,
} from './legacy-alerts.repository.js';
export { createAlerts, type Alerts } from './alerts-feature.service.js';
export type { DeliveryQueue, DeliverySeam, Notification, OutletTarget } from './alerts.service.js';
