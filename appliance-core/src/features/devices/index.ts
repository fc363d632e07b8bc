/**
 * The devices feature: inventory, tags, profiles, the device crawl, walks, autodiscovery
 * credentials and pending devices. What other features use (functions and types, never SQL):
 *
 * - `DevicesService#registerDeviceCleanup(name, purge, after?)`: a feature that keeps rows per
 *   device adds its clean-up to device deletion (one transaction with the device row).
 * - `provideDeviceRelation` / `provideDeviceSection` / `registerDeviceLogStats`: a feature adds
 *   its data to GET /api/devices, GET /api/device/{device} and GET /api/device/{device}/stats.
 * - `registerCrawlHandler(name, handler)`: a feature's share of every device crawl (the
 *   trackers' interface and disk trackers), stored in the crawl's transaction.
 * - `registerDeviceWrites(writer)` and `deviceReachabilityWrite(...)`: this feature's statements
 *   on the storage writer, which producers (the latency poller) queue by name.
 * - `snmpTargetOfDevice`: a device's agent with its stored credentials (SNMP itself is
 *   platform/snmp); the credential sets and the pending-device recording discovery uses.
 */
export { DevicesService, formatBytes } from './devices.service.js';
export type { DeviceWindow } from './devices.service.js';
export type { CrawlHandler } from './crawl.engine.js';
export { DevicesEngine } from './devices.engine.js';
export { devicesRoutes } from './devices.routes.js';
export { credentialsRoutes } from './credentials.routes.js';
export { pendingRoutes } from './pending.routes.js';
export { walksRoutes } from './walks.routes.js';
export {
  deviceAddresses,
  deviceIpSet,
  deviceReachabilityWrite,
  registerDeviceWrites,
  snmpDeviceIds,
  type DeviceRow,
} from './devices.repository.js';
export { snmpTargetOfDevice } from './device-snmp.service.js';
export type { DeviceIpEntry, DeviceIpMap, DeviceIpSnapshot } from './ip-map.cache.js';
export {
  credentialAttempts,
  existingCredentialIds,
  findCredential,
  type CredentialRow,
} from './credentials.repository.js';
export { recordDiscoveredHosts, type DiscoveredHost } from './pending.repository.js';
// The agents feature's writers: check-ins as pending rows, devices of enrolled or adopted agents.
export {
  agentProfile,
  createAgentDevice,
  findDeviceAt,
  findDeviceOfAgent,
  findPendingByAgentUuid,
  moveAgentDevice,
  recordAgentCheckin,
  type AgentCheckin,
} from './pending.repository.js';
export { profileExists } from './devices.repository.js';
