/**
 * The dashboards feature: per-user dashboards, device page layouts and pinned widgets, and the
 * device tracker widget catalogue (`TrackerWidgets#register` adds a tracker table to it).
 */
export { dashboardsRoutes } from './dashboards.routes.js';
export { deleteLayoutsOfDevice } from './dashboards.repository.js';
export {
  TrackerWidgets,
  WIDGET_IDS,
  type DeviceTrackerWidget,
  type TrackerWidgetSource,
} from './widgets.catalog.js';
