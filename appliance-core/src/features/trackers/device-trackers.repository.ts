/**
 * SQL over every tracker table of one device: the tracker ids of a kind (device log stats) and
 * the clean-up of device deletion. The tracker tables' triggers (0005_trackers.sql) remove the
 * samples, rollups and alerts of each deleted row in the same statement.
 */
import type { DB } from '../../platform/db/database.js';
import { deleteLegacyAlertsOfDevice } from '../alerts/index.js';
import type { SampleKind } from './samples.repository.js';

const IDS_OF_DEVICE: Record<SampleKind, string> = {
  latency: 'SELECT id FROM latency_trackers WHERE device_id = ?',
  port: 'SELECT id FROM port_trackers WHERE device_id = ?',
  oid: "SELECT id FROM oid_trackers WHERE device_id = ? AND kind = 'oid'",
  disk: 'SELECT id FROM disk_trackers WHERE device_id = ?',
  interface: 'SELECT id FROM interface_trackers WHERE device_id = ?',
};

export function trackerIdsOfDevice(db: DB, kind: SampleKind, deviceId: number): number[] {
  return db.prepare(IDS_OF_DEVICE[kind]).pluck().all(deviceId) as number[];
}

/** Deletes every tracker of a device with its history (inside the device delete transaction). */
export function deleteTrackersOfDevice(db: DB, deviceId: number): void {
  deleteLegacyAlertsOfDevice(db, deviceId);
  for (const table of [
    'latency_trackers',
    'port_trackers',
    'oid_trackers',
    'interface_trackers',
    'disk_trackers',
  ])
    db.prepare(`DELETE FROM ${table} WHERE device_id = ?`).run(deviceId);
}
