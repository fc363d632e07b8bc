/**
 * The trackers' share of the device crawl (a crawl handler registered with the devices feature):
 * the crawl walks IF-MIB ifTable/ifXTable and HOST-RESOURCES-MIB hrStorageTable for it, and it
 * creates or refreshes the device's interface and disk trackers inside the crawl's transaction.
 */
import type { DB } from '../../platform/db/database.js';
import { hexOf, type DecodedVarbind } from '../../platform/snmp/snmp.client.js';
import { numberOf as num, tableRows, textOf as text } from '../../platform/snmp/snmp-table.js';
import type { CrawlHandler } from '../devices/index.js';
import { upsertCrawledDisks, type CrawledDisk } from './disks.repository.js';
import { upsertCrawledInterfaces, type CrawledInterface } from './interfaces.repository.js';

export const MIB = {
  ifEntry: '1.3.6.1.2.1.2.2.1',
  ifXEntry: '1.3.6.1.2.1.31.1.1.1',
  hrStorageEntry: '1.3.6.1.2.1.25.2.3.1',
} as const;

/** hrStorageTypes that are disks: fixed (.4), flash (.9) and network (.10) disks; RAM, virtual memory and removable media are not. */
const DISK_STORAGE_TYPES = new Set([
  '1.3.6.1.2.1.25.2.1.4',
  '1.3.6.1.2.1.25.2.1.10',
  '1.3.6.1.2.1.25.2.1.9',
]);

/** A MAC from ifPhysAddress: net-snmp's octets, shown as printable text only when they happened to be printable. */
function macOf(v: DecodedVarbind | undefined): string | null {
  if (!v || v.value === null || v.value === '') return null;
  if (v.type === 'Hex-STRING') return String(v.value);
  return hexOf(Buffer.from(String(v.value), 'utf8'));
}

export function parseInterfaces(varbinds: readonly DecodedVarbind[]): CrawledInterface[] {
  const ifTable = tableRows(varbinds, MIB.ifEntry);
  const ifXTable = tableRows(varbinds, MIB.ifXEntry);
  return [...ifTable.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, row]) => {
      const x = ifXTable.get(index) ?? new Map<number, DecodedVarbind>();
      const highSpeed = num(x.get(15));
      const speed = num(row.get(5));
      return {
        index,
        name: text(x.get(1)) ?? text(row.get(2)) ?? `if${index}`,
        descr: text(row.get(2)),
        alias: text(x.get(18)),
        type: num(row.get(3)),
        mtu: num(row.get(4)),
        // ifSpeed saturates at 4294967295; ifHighSpeed (Mbit/s) is exact above that.
        speed:
          highSpeed !== null &&
          highSpeed > 0 &&
          (speed === null || speed >= 4_294_967_295 || highSpeed * 1_000_000 > speed)
            ? highSpeed * 1_000_000
            : speed,
        mac: macOf(row.get(6)),
        adminStatus: num(row.get(7)),
        operStatus: num(row.get(8)),
      };
    });
}

export function parseDisks(varbinds: readonly DecodedVarbind[]): CrawledDisk[] {
  const disks: CrawledDisk[] = [];
  for (const [index, row] of [...tableRows(varbinds, MIB.hrStorageEntry).entries()].sort(
    ([a], [b]) => a - b,
  )) {
    const storageType = text(row.get(2));
    if (!storageType || !DISK_STORAGE_TYPES.has(storageType)) continue;
    const units = num(row.get(4)) ?? 0;
    const size = num(row.get(5)) ?? 0;
    const used = num(row.get(6)) ?? 0;
    disks.push({
      index,
      name: text(row.get(3)) ?? `storage ${index}`,
      storageType,
      allocationUnits: units,
      total: size * units,
      available: Math.max(0, size - used) * units,
    });
  }
  return disks;
}

export function trackerCrawlHandler(db: DB): CrawlHandler {
  return {
    subtrees: [MIB.ifEntry, MIB.ifXEntry, MIB.hrStorageEntry],
    store(deviceId, varbinds, now) {
      const interfaces = parseInterfaces(varbinds);
      const disks = parseDisks(varbinds);
      upsertCrawledInterfaces(db, deviceId, interfaces, now);
      upsertCrawledDisks(db, deviceId, disks, now);
      return { interfaces: interfaces.length, disks: disks.length };
    },
  };
}
