/**
 * The widget catalogue of device pages: each tracker table a device can have shows as a widget
 * (`widgetId`) of a default size (`w` x `h` grid cells). The trackers feature registers its
 * tables (it imports this feature, never the reverse).
 */

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
