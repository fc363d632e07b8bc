/**
 * IP address -> device: the one cached map that receivers (syslog, IDS, flows, capture, agents)
 * use to attribute a packet or a row to an inventory device, with the device's label, profile
 * and tag ids (for tag scoping).
 *
 * Invariants:
 * - Never stale: TEMP triggers on this connection (platform/db/change-triggers.ts) mark the map
 *   stale inside every statement that inserts or deletes a device, changes its `ip_address`,
 *   `label` or `profile`, or changes its tag links; the next read rebuilds it. Other columns
 *   (reachability, which the pollers write through the storage writer's own connection, the
 *   enable_* flags) never invalidate it. Writes through another connection are not seen: the
 *   watched tables and columns are written through this one.
 * - Never holds uncommitted rows: inside a transaction a stale map is answered from a fresh read
 *   that is not kept, so a rolled-back write cannot leave a device in the cache.
 * - Worker threads get it as data: `subscribe` delivers `{version, entries}` (plain objects,
 *   structured-clone friendly, posted as is over a MessagePort) after invalidations, coalesced to
 *   at most one delivery per `coalesceMs` (100 ms by default); versions only grow, so a receiver
 *   keeps the highest it has seen. A new subscriber gets the current snapshot at once.
 *
 * Keys are canonical IP text (IPv4 dotted, IPv6 compressed lower case, as devices store them);
 * lookups canonicalise their input, and an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a
 * dual-stack socket reports) finds the IPv4 device.
 */
import net from 'node:net';
import { watchTables } from '../../platform/db/change-triggers.js';
import type { DB } from '../../platform/db/database.js';
import { deviceDirectoryRows } from './devices.repository.js';

export interface DeviceIpEntry {
  id: number;
  /** Canonical IP text. */
  ip: string;
  label: string;
  profile: string;
  /** Ids of the device's tags, ascending. */
  readonly tagIds: readonly number[];
}

/** The whole map as data, for another thread. */
export interface DeviceIpSnapshot {
  version: number;
  entries: readonly DeviceIpEntry[];
}

export type DeviceIpListener = (snapshot: DeviceIpSnapshot) => void;

export interface DeviceIpMapOptions {
  /** Smallest gap between two deliveries to subscribers (ms). */
  coalesceMs?: number;
  /** Told about a subscriber that threw (the others are still served). */
  onListenerError?: (err: unknown) => void;
}

/** The canonical key of an IP literal (an IPv4-mapped IPv6 address is its IPv4), or null. */
export function ipKey(text: string): string | null {
  const trimmed = text.trim();
  if (net.isIPv4(trimmed)) return trimmed;
  if (!net.isIPv6(trimmed)) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(trimmed);
  if (mapped && net.isIPv4(mapped[1] as string)) return mapped[1] as string;
  const canonical = new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1] as string, 16);
    const lo = parseInt(hexMapped[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

interface Built {
  entries: readonly DeviceIpEntry[];
  byIp: Map<string, DeviceIpEntry>;
  byId: Map<number, DeviceIpEntry>;
}

export class DeviceIpMap {
  private built: Built | null = null;
  private currentVersion = 1;
  private deliveredVersion = 0;
  private lastDelivery = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly listeners = new Set<DeviceIpListener>();
  private readonly coalesceMs: number;
  private readonly onListenerError: (err: unknown) => void;

  constructor(
    private readonly db: DB,
    options: DeviceIpMapOptions = {},
  ) {
    this.coalesceMs = options.coalesceMs ?? 100;
    this.onListenerError = options.onListenerError ?? (() => {});
    watchTables(
      db,
      'device_ip_map',
      [{ table: 'devices', updateOf: 'ip_address, label, profile' }, { table: 'device_tags' }],
      () => this.invalidate(),
    );
  }

  /** Grows with every invalidation. */
  get version(): number {
    return this.currentVersion;
  }

  /** The device holding an address (any IP text form), or undefined. */
  byIp(ip: string): DeviceIpEntry | undefined {
    const key = ipKey(ip);
    return key === null ? undefined : this.read().byIp.get(key);
  }

  byId(id: number): DeviceIpEntry | undefined {
    return this.read().byId.get(id);
  }

  /** Every device, by id, as data. */
  snapshot(): DeviceIpSnapshot {
    return { version: this.currentVersion, entries: this.read().entries };
  }

  /**
   * Delivers the current snapshot now and a new one after invalidations (coalesced). Returns the
   * unsubscribe function.
   */
  subscribe(listener: DeviceIpListener): () => void {
    this.listeners.add(listener);
    this.call(listener, this.snapshot());
    return () => this.listeners.delete(listener);
  }

  /** Stops deliveries (the composition root calls it at shutdown). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  private invalidate(): void {
    this.built = null;
    this.currentVersion++;
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.timer || this.listeners.size === 0) return;
    const wait = Math.max(0, this.lastDelivery + this.coalesceMs - Date.now());
    this.timer = setTimeout(() => this.deliver(), wait);
    this.timer.unref();
  }

  private deliver(): void {
    this.timer = null;
    if (this.closed || !this.db.open || this.deliveredVersion === this.currentVersion) return;
    // A write transaction still open on this connection: deliver once it has ended.
    if (this.db.inTransaction) return void this.schedule();
    this.lastDelivery = Date.now();
    const snapshot = this.snapshot();
    this.deliveredVersion = snapshot.version;
    for (const listener of this.listeners) this.call(listener, snapshot);
  }

  private call(listener: DeviceIpListener, snapshot: DeviceIpSnapshot): void {
    try {
      listener(snapshot);
    } catch (err) {
      this.onListenerError(err);
    }
  }

  private read(): Built {
    if (this.built) return this.built;
    const built = this.build();
    // Inside a transaction the rows may still be rolled back: answer them, do not keep them.
    if (!this.db.inTransaction) this.built = built;
    return built;
  }

  private build(): Built {
    const { devices, links } = deviceDirectoryRows(this.db);
    const tags = new Map<number, number[]>();
    for (const link of links) {
      let list = tags.get(link.device_id);
      if (!list) tags.set(link.device_id, (list = []));
      list.push(link.tag_id);
    }
    // Frozen: subscribers on this thread share the entries with every lookup.
    const byId = new Map<number, DeviceIpEntry>();
    const entries = Object.freeze(
      devices.map((d) => {
        const entry = Object.freeze({ ...d, tagIds: Object.freeze(tags.get(d.id) ?? []) });
        byId.set(d.id, entry);
        return entry;
      }),
    );
    const byIp = new Map<string, DeviceIpEntry>();
    for (const entry of entries) {
      const key = ipKey(entry.ip);
      if (key !== null) byIp.set(key, entry);
    }
    return { entries, byIp, byId };
  }
}
