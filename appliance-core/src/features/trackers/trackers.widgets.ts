/**
 * Device-page widgets of every tracker table (the catalogue and its widget ids belong to the
 * dashboards feature; this feature registers its tables in it: trackers -> dashboards, one way).
 */
import type { DB } from '../../platform/db/database.js';
import { WIDGET_IDS, type TrackerWidgets } from '../dashboards/index.js';
import { listDiskTrackers } from './disks.repository.js';
import { listInterfaceTrackers } from './interfaces.repository.js';
import { latencyTrackerOfDevice } from './latency.repository.js';
import { oidTrackersOfDevice } from './oids.repository.js';
import { portTrackersOfDevice } from './ports.repository.js';

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
    trackerTable: 'interfaces',
    widgetId: WIDGET_IDS.interfaces,
    w: 6,
    h: 4,
    trackerIds: (id) => listInterfaceTrackers(db, id).map((t) => t.id),
  });
  widgets.register({
    trackerTable: 'disks',
    widgetId: WIDGET_IDS.disks,
    w: 4,
    h: 3,
    trackerIds: (id) => listDiskTrackers(db, id).map((t) => t.id),
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
