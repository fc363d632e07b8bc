/**
 * Device-page widgets of the trackers this feature owns (ids reserved by the dashboards feature).
 */
import type { DB } from '../../platform/db/database.js';
import { WIDGET_IDS, type TrackerWidgets } from '../dashboards/index.js';
import {
  latencyTrackerOfDevice,
  oidTrackersOfDevice,
  portTrackersOfDevice,
} from './trackers.repository.js';

export function registerTrackerWidgets(widgets: TrackerWidgets, db: DB): void {
  widgets.register({
    trackerTable: 'latency',
    widgetId: WIDGET_IDS.latency,
    w: 6,
    h: 3,
    trackerIds: (id) =>
      [latencyTrackerOfDevice(db, id)?.id].filter((x): x is number => x !== undefined),
  });
  widgets.register({
    trackerTable: 'oids',
    widgetId: WIDGET_IDS.oids,
    w: 4,
    h: 3,
    trackerIds: (id) => oidTrackersOfDevice(db, id, 'oid').map((t) => t.id),
  });
  widgets.register({
    trackerTable: 'ports',
    widgetId: WIDGET_IDS.ports,
    w: 4,
    h: 3,
    trackerIds: (id) => portTrackersOfDevice(db, id).map((t) => t.id),
  });
  widgets.register({
    trackerTable: 'services',
    widgetId: WIDGET_IDS.services,
    w: 4,
    h: 3,
    trackerIds: (id) => oidTrackersOfDevice(db, id, 'service').map((t) => t.id),
  });
}
