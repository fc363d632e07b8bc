/**
 * The devices feature: inventory, tags, profiles, SNMP (client, crawl, walks), autodiscovery
 * credentials and pending devices. Other features use what is exported here:
 *
 * - `DevicesService#registerDeviceCleanup(name, purge, after?)`: a feature that keeps rows per
 *   device adds its clean-up to device deletion (one transaction with the device row).
 * - `provideDeviceRelation` / `provideDeviceSection` / `registerDeviceLogStats`: a feature adds
 *   its data to GET /api/devices, GET /api/device/{device} and GET /api/device/{device}/stats.
 * - The interface and disk tracker repositories (trackers build endpoints and pollers on them)
 *   and the helpers discovery uses to record pending devices (SNMP itself is platform/snmp).
 * - Writes as data (`DEVICE_REACHABILITY_SQL`, `DISK_READING_SQL` and their parameter helpers)
 *   for the trackers' storage writer, which runs them on its own connection.
 */
export {
  DevicesService,
  DEVICE_RELATIONS,
  DEVICE_SECTIONS,
  canonicalIp,
  formatBytes,
} from './devices.service.js';
export type {
  DeviceCleanup,
  DeviceLogStats,
  DeviceRelation,
  DeviceSection,
  DeviceWindow,
  RelationLoader,
  SectionProvider,
} from './devices.service.js';
export { DevicesEngine, walksHousekeeping } from './devices.engine.js';
export { devicesRoutes } from './devices.routes.js';
export { credentialsRoutes } from './credentials.routes.js';
export { pendingRoutes } from './pending.routes.js';
export { walksRoutes } from './walks.routes.js';
export {
  APPLIANCE_DEVICE_ID,
  DEVICE_REACHABILITY_SQL,
  deviceIpSet,
  deviceReachabilityParams,
  findDevice,
  findSnmpConfig,
  tagIdsOfDevice,
  type DeviceRow,
} from './devices.repository.js';
export {
  credentialAttempts,
  existingCredentialIds,
  findCredential,
  listCredentials,
  type CredentialAttempt,
  type CredentialRow,
} from './credentials.repository.js';
export { recordDiscoveredHosts, type DiscoveredHost } from './pending.repository.js';
export {
  deleteDiskTracker,
  deleteInterfaceTracker,
  DISK_READING_SQL,
  diskReadingParams,
  diskRecord,
  DISK_DEFAULT_INTERVAL,
  findDiskTracker,
  findInterfaceTracker,
  freespaceOidOf,
  insertDiskTracker,
  interfaceRecord,
  INTERFACE_DEFAULT_INTERVAL,
  listDiskTrackers,
  listInterfaceTrackers,
  updateDiskTracker,
  updateInterfaceTracker,
  type DiskTrackerRow,
  type InterfaceTrackerRow,
  type NewDiskTracker,
} from './trackers.repository.js';
export {
  DiskTrackerRecord,
  InterfaceTrackerRecord,
  type DiscoveryStatusRecord,
} from './devices.schema.js';
export { WALKS_TABLE } from './walks.repository.js';
