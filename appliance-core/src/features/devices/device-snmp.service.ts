/**
 * The SNMP target of an inventory device: its address with its stored `snmpconfig` (secrets opened
 * in memory only), or null while the device is missing, has SNMP off or has no configuration.
 * The crawl, live walks and the trackers' pollers reach a device's agent through this one path.
 */
import type { DB } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import { snmpTargetOf } from '../../platform/snmp/snmp-config.js';
import type { SnmpTarget } from '../../platform/snmp/snmp.client.js';
import { findDevice, findSnmpConfig } from './devices.repository.js';

export function snmpTargetOfDevice(
  db: DB,
  secrets: SecretBox,
  deviceId: number,
): SnmpTarget | null {
  const device = findDevice(db, deviceId);
  const config = findSnmpConfig(db, deviceId);
  if (!device || device.enable_snmp !== 1 || !config) return null;
  return snmpTargetOf(secrets, device.ip_address, config);
}
