/**
 * The widget catalogue of device pages: each tracker table a device can have shows as a widget
 * (`widgetId`) of a default size (`w` x `h` grid cells). Interfaces and disks come with the
 * devices feature; the trackers feature registers latency, OIDs, ports and services.
 */
import type { DB } from '../../platform/db/database.js';
import { listDiskTrackers, listInterfaceTrackers } from '../devices/index.js';

export interface TrackerWidgetSource {
  trackerTable: string;
  widgetId: number;
  w: number;
  h: number;
  /** Ids of the device's trackers of this table, in display order. */
  trackerIds(deviceId: number): number[];
}

export interface DeviceTrackerWidget {
  trackerId: number;
  trackerTable: string;
  widgetId: number;
  w: number;
  h: number;
}

/** Widget ids of the catalogue (stable: saved dashboards refer to them). */
export const WIDGET_IDS = {
  latency: 1,
  interfaces: 2,
  disks: 3,
  oids: 4,
  ports: 5,
  services: 6,
} as const;

export class TrackerWidgets {
  private readonly sources = new Map<string, TrackerWidgetSource>();

  constructor(db: DB) {
    this.register({
      trackerTable: 'interfaces',
      widgetId: WIDGET_IDS.interfaces,
      w: 6,
      h: 4,
      trackerIds: (id) => listInterfaceTrackers(db, id).map((t) => t.id),
    });
    this.register({
      trackerTable: 'disks',
      widgetId: WIDGET_IDS.disks,
      w: 4,
      h: 3,
      trackerIds: (id) => listDiskTrackers(db, id).map((t) => t.id),
    });
  }

  /** Adds a tracker table to device pages (once per table). */
  register(source: TrackerWidgetSource): void {
    if (this.sources.has(source.trackerTable))
      throw new Error(`tracker widgets for ${source.trackerTable} are already registered`);
    this.sources.set(source.trackerTable, source);
  }

  forDevice(deviceId: number): DeviceTrackerWidget[] {
    return [...this.sources.values()]
      .sort((a, b) => a.widgetId - b.widgetId)
      .flatMap((source) =>
        source.trackerIds(deviceId).map((trackerId) => ({
          trackerId,
          trackerTable: source.trackerTable,
          widgetId: source.widgetId,
          w: source.w,
          h: source.h,
        })),
      );
  }
}
