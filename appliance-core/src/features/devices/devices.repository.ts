/**
 * SQL for devices, their SNMP configuration, tags and profiles. Plain functions, database first.
 * Secrets arrive here sealed and leave sealed.
 */
import type { DB, Statement } from '../../platform/db/database.js';
import type { SnmpConfigRow } from '../../platform/snmp/snmp-config.js';
import type { DeviceTag } from './devices.schema.js';

export const APPLIANCE_DEVICE_ID = 1;

export interface DeviceRow {
  id: number;
  label: string;
  ip_address: string;
  profile: string;
  enable_snmp: number;
  enable_agent: number;
  enable_netflow: number;
  enable_port_monitor: number;
  agent_uuid: string | null;
  reachability: 'up' | 'down' | null;
  reachability_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface DeviceFields {
  label: string;
  ip_address: string;
  profile: string;
  enable_snmp: boolean;
  enable_agent: boolean;
  enable_netflow: boolean;
  enable_port_monitor: boolean;
  agent_uuid: string | null;
}

export function findDevice(db: DB, id: number): DeviceRow | undefined {
  return db.prepare('SELECT * FROM devices WHERE id = ?').get(id) as DeviceRow | undefined;
}

export function findDeviceByIp(db: DB, ip: string): DeviceRow | undefined {
  return db.prepare('SELECT * FROM devices WHERE ip_address = ?').get(ip) as DeviceRow | undefined;
}

export interface DeviceListFilter {
  /** An SQL condition on `d.id` (tag scoping) and its parameters. */
  scope: { sql: string; params: unknown[] };
  tag?: string | undefined;
  status?: 'up' | 'down' | undefined;
  search?: string | undefined;
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function listDevices(db: DB, filter: DeviceListFilter): DeviceRow[] {
  const { sql, params } = listCondition(filter);
  return db
    .prepare(`SELECT d.* FROM devices d WHERE ${sql} ORDER BY d.id`)
    .all(...params) as DeviceRow[];
}

/** The WHERE condition of a device list (on `d`) and its parameters. */
function listCondition(filter: DeviceListFilter): { sql: string; params: unknown[] } {
  const where = [filter.scope.sql];
  const params: unknown[] = [...filter.scope.params];
  if (filter.tag !== undefined) {
    where.push(
      `EXISTS (SELECT 1 FROM device_tags ft JOIN tags t ON t.id = ft.tag_id WHERE ft.device_id = d.id AND t.slug = ? AND t.type = 'device')`,
    );
    params.push(filter.tag);
  }
  if (filter.status !== undefined) {
    where.push('d.reachability = ?');
    params.push(filter.status);
  }
  if (filter.search !== undefined && filter.search !== '') {
    // LIKE is case-insensitive for ASCII in SQLite; lower() covers the rest of the input.
    where.push(
      `(lower(d.label) LIKE lower(?) ESCAPE '\\' OR lower(d.ip_address) LIKE lower(?) ESCAPE '\\')`,
    );
    params.push(likePattern(filter.search), likePattern(filter.search));
  }
  return { sql: where.join(' AND '), params };
}

/**
 * Id and reachability of the listed devices, as raw rows (no row objects): the status answer of
 * tens of thousands of devices (GET /api/devices/status) is built from arrays.
 */
export function listDeviceStatus(
  db: DB,
  filter: DeviceListFilter,
): [id: number, reachability: 'up' | 'down' | null][] {
  const { sql, params } = listCondition(filter);
  return db
    .prepare(`SELECT d.id, d.reachability FROM devices d WHERE ${sql} ORDER BY d.id`)
    .raw()
    .all(...params) as [number, 'up' | 'down' | null][];
}

export function insertDevice(db: DB, fields: DeviceFields, now: number): number {
  return Number(
    db
      .prepare(
        `INSERT INTO devices (label, ip_address, profile, enable_snmp, enable_agent, enable_netflow, enable_port_monitor, agent_uuid, created_at, updated_at)
         VALUES (@label, @ip_address, @profile, @enable_snmp, @enable_agent, @enable_netflow, @enable_port_monitor, @agent_uuid, @now, @now)`,
      )
      .run({ ...flags(fields), now }).lastInsertRowid,
  );
}

export function updateDevice(db: DB, id: number, fields: DeviceFields, now: number): void {
  db.prepare(
    `UPDATE devices SET label = @label, ip_address = @ip_address, profile = @profile, enable_snmp = @enable_snmp, enable_agent = @enable_agent,
       enable_netflow = @enable_netflow, enable_port_monitor = @enable_port_monitor, agent_uuid = @agent_uuid, updated_at = @now WHERE id = @id`,
  ).run({ ...flags(fields), now, id });
}

function flags(fields: DeviceFields) {
  return {
    label: fields.label,
    ip_address: fields.ip_address,
    profile: fields.profile,
    enable_snmp: fields.enable_snmp ? 1 : 0,
    enable_agent: fields.enable_agent ? 1 : 0,
    enable_netflow: fields.enable_netflow ? 1 : 0,
    enable_port_monitor: fields.enable_port_monitor ? 1 : 0,
    agent_uuid: fields.agent_uuid,
  };
}

export function deleteDeviceRow(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM devices WHERE id = ?').run(id).changes > 0;
}

/** Devices with SNMP enabled (crawl jobs). */
export function snmpDeviceIds(db: DB): number[] {
  return (
    db.prepare('SELECT id FROM devices WHERE enable_snmp = 1 ORDER BY id').all() as { id: number }[]
  ).map((r) => r.id);
}

const addressStatements = new WeakMap<DB, Statement>();

/**
 * The addresses of devices by id (a missing device is absent): what the pollers probe. Prepared
 * once per connection (the latency and TCP pollers ask for every batch and every check).
 */
export function deviceAddresses(db: DB, deviceIds: readonly number[]): Map<number, string> {
  let statement = addressStatements.get(db);
  if (!statement) {
    statement = db.prepare(
      'SELECT id, ip_address FROM devices WHERE id IN (SELECT value FROM json_each(?))',
    );
    addressStatements.set(db, statement);
  }
  const rows = statement.all(JSON.stringify(deviceIds)) as { id: number; ip_address: string }[];
  return new Map(rows.map((r) => [r.id, r.ip_address]));
}

/** Every device IP address (discovery skips them). */
export function deviceIpSet(db: DB): Set<string> {
  return new Set(
    (db.prepare('SELECT ip_address FROM devices').all() as { ip_address: string }[]).map(
      (r) => r.ip_address,
    ),
  );
}

// --- writes other features queue on the storage writer ------------------------------------

const REACHABILITY_SQL = 'UPDATE devices SET reachability = ?, reachability_at = ? WHERE id = ?';

/**
 * The statements of this feature's tables that other features queue on the storage writer (it
 * runs them on its own connection). `devices.reachability` writes only `reachability` and
 * `reachability_at`, which no TEMP-trigger cache of the main connection watches (the device list
 * and the IP map watch other columns): keep it so.
 */
const DEVICE_WRITES: Readonly<Record<string, string>> = {
  'devices.reachability': REACHABILITY_SQL,
};

/** Defines this feature's statements on a storage writer (idempotent). */
export function registerDeviceWrites(writer: { define(name: string, sql: string): void }): void {
  for (const [name, sql] of Object.entries(DEVICE_WRITES)) writer.define(name, sql);
}

/** Latency >= 0 is up, -1 is down (spec part 2, States). */
const reachabilityParams = (deviceId: number, latency: number, now: number) =>
  [latency >= 0 ? 'up' : 'down', now, deviceId] as const;

/** A latency reading's reachability update, as a named write for the storage writer. */
export function deviceReachabilityWrite(
  deviceId: number,
  latency: number,
  now: number,
): [name: 'devices.reachability', params: (string | number)[]] {
  return ['devices.reachability', [...reachabilityParams(deviceId, latency, now)]];
}

/** Records the latest latency reading on this connection (tests and fixtures). */
export function setDeviceReachability(
  db: DB,
  deviceId: number,
  latency: number,
  now: number,
): void {
  db.prepare(REACHABILITY_SQL).run(...reachabilityParams(deviceId, latency, now));
}

// --- tags -----------------------------------------------------------------------------------

export interface TagRow {
  id: number;
  slug: string;
  name: string;
  type: string;
}

export function listTags(db: DB, onlyIds: readonly number[] | null): TagRow[] {
  if (onlyIds === null)
    return db.prepare('SELECT id, slug, name, type FROM tags ORDER BY slug, id').all() as TagRow[];
  return db
    .prepare(
      'SELECT id, slug, name, type FROM tags WHERE id IN (SELECT value FROM json_each(?)) ORDER BY slug, id',
    )
    .all(JSON.stringify(onlyIds)) as TagRow[];
}

export function deviceTagsBySlugs(db: DB, slugs: readonly string[]): TagRow[] {
  return db
    .prepare(
      `SELECT id, slug, name, type FROM tags WHERE type = 'device' AND slug IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(slugs)) as TagRow[];
}

/** The id of the device tag `slug`, created (named `name`) when missing. */
export function ensureDeviceTag(db: DB, slug: string, name: string): number {
  db.prepare(
    `INSERT INTO tags (slug, name, type) VALUES (?, ?, 'device') ON CONFLICT (slug, type) DO NOTHING`,
  ).run(slug, name);
  return (
    db.prepare(`SELECT id FROM tags WHERE slug = ? AND type = 'device'`).get(slug) as { id: number }
  ).id;
}

/** Deletes a device's SNMP configuration (device deletion). */
export function deleteSnmpConfig(db: DB, deviceId: number): void {
  db.prepare('DELETE FROM device_snmp WHERE device_id = ?').run(deviceId);
}

export function deleteDeviceTagLinks(db: DB, deviceId: number): void {
  db.prepare('DELETE FROM device_tags WHERE device_id = ?').run(deviceId);
}

/** Every device with its address, label and profile, and every tag link (the IP map's rows). */
export function deviceDirectoryRows(db: DB): {
  devices: { id: number; ip: string; label: string; profile: string }[];
  links: { device_id: number; tag_id: number }[];
} {
  return {
    devices: db
      .prepare('SELECT id, ip_address AS ip, label, profile FROM devices ORDER BY id')
      .all() as { id: number; ip: string; label: string; profile: string }[],
    links: db
      .prepare('SELECT device_id, tag_id FROM device_tags ORDER BY device_id, tag_id')
      .all() as { device_id: number; tag_id: number }[],
  };
}

export function tagIdsOfDevice(db: DB, deviceId: number): number[] {
  return linkedTagIds(db, DEVICE_TAG_LINKS, deviceId);
}

/** A tag link table and its key column: devices' tags, or pending devices' tags. */
export interface TagLinks {
  table: 'device_tags' | 'pending_device_tags';
  key: 'device_id' | 'pending_id';
}
const DEVICE_TAG_LINKS: TagLinks = { table: 'device_tags', key: 'device_id' };

/** Tags of many linked rows in one query, as the records show them (every id gets a list). */
export function linkedTags(
  db: DB,
  links: TagLinks,
  ids: readonly number[],
): Map<number, DeviceTag[]> {
  const map = new Map<number, DeviceTag[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return map;
  const rows = db
    .prepare(
      `SELECT l.${links.key} AS owner, t.slug, t.name, t.type FROM ${links.table} l JOIN tags t ON t.id = l.tag_id
       WHERE l.${links.key} IN (SELECT value FROM json_each(?)) ORDER BY t.slug`,
    )
    .all(JSON.stringify(ids)) as (DeviceTag & { owner: number })[];
  for (const { owner, ...tag } of rows) map.get(owner)?.push(tag);
  return map;
}

/** Tag ids linked to one row. */
export function linkedTagIds(db: DB, links: TagLinks, id: number): number[] {
  return db
    .prepare(`SELECT tag_id FROM ${links.table} WHERE ${links.key} = ?`)
    .pluck()
    .all(id) as number[];
}

/** Replaces the tags linked to one row. */
export function replaceLinkedTags(
  db: DB,
  links: TagLinks,
  id: number,
  tagIds: readonly number[],
): void {
  db.prepare(`DELETE FROM ${links.table} WHERE ${links.key} = ?`).run(id);
  const insert = db.prepare(
    `INSERT OR IGNORE INTO ${links.table} (${links.key}, tag_id) VALUES (?, ?)`,
  );
  for (const tagId of tagIds) insert.run(id, tagId);
}

/** Tags of many devices in one query, as the records show them. */
export function tagsOfDevices(db: DB, deviceIds: readonly number[]): Map<number, DeviceTag[]> {
  return linkedTags(db, DEVICE_TAG_LINKS, deviceIds);
}

export function replaceDeviceTags(db: DB, deviceId: number, tagIds: readonly number[]): void {
  replaceLinkedTags(db, DEVICE_TAG_LINKS, deviceId, tagIds);
}

// --- profiles -------------------------------------------------------------------------------

export interface ProfileRow {
  id: number;
  profile: string;
  layout: string;
}

export function listProfiles(db: DB): ProfileRow[] {
  return db.prepare('SELECT id, profile, layout FROM profiles ORDER BY id').all() as ProfileRow[];
}

export function profileExists(db: DB, profile: string): boolean {
  return db.prepare('SELECT 1 FROM profiles WHERE profile = ?').get(profile) !== undefined;
}

// --- SNMP configuration ---------------------------------------------------------------------

export interface DeviceSnmpRow extends SnmpConfigRow {
  device_id: number;
  sys_name: string | null;
  sys_descr: string | null;
  sys_object_id: string | null;
  last_crawl_at: number | null;
  last_crawl_status: 'ok' | 'failed' | null;
  last_crawl_error: string | null;
}

export function findSnmpConfig(db: DB, deviceId: number): DeviceSnmpRow | undefined {
  return db.prepare('SELECT * FROM device_snmp WHERE device_id = ?').get(deviceId) as
    DeviceSnmpRow | undefined;
}

export function saveSnmpConfig(db: DB, deviceId: number, config: SnmpConfigRow, now: number): void {
  db.prepare(
    `INSERT INTO device_snmp (device_id, snmp_version, snmp_port, snmp_community, snmp_v3_security, authuser, authpass, authprot, privpass, privprot, updated_at)
     VALUES (@device_id, @snmp_version, @snmp_port, @snmp_community, @snmp_v3_security, @authuser, @authpass, @authprot, @privpass, @privprot, @now)
     ON CONFLICT (device_id) DO UPDATE SET snmp_version = excluded.snmp_version, snmp_port = excluded.snmp_port, snmp_community = excluded.snmp_community,
       snmp_v3_security = excluded.snmp_v3_security, authuser = excluded.authuser, authpass = excluded.authpass, authprot = excluded.authprot,
       privpass = excluded.privpass, privprot = excluded.privprot, updated_at = excluded.updated_at`,
  ).run({ device_id: deviceId, ...pickSnmp(config), now });
}

export function pickSnmp(config: SnmpConfigRow): SnmpConfigRow {
  return {
    snmp_version: config.snmp_version,
    snmp_port: config.snmp_port,
    snmp_community: config.snmp_community,
    snmp_v3_security: config.snmp_v3_security,
    authuser: config.authuser,
    authpass: config.authpass,
    authprot: config.authprot,
    privpass: config.privpass,
    privprot: config.privprot,
  };
}

export interface CrawlOutcome {
  at: number;
  ok: boolean;
  error?: string;
  sysName?: string | null;
  sysDescr?: string | null;
  sysObjectId?: string | null;
}

export function recordCrawl(db: DB, deviceId: number, outcome: CrawlOutcome): void {
  if (outcome.ok) {
    db.prepare(
      `UPDATE device_snmp SET last_crawl_at = ?, last_crawl_status = 'ok', last_crawl_error = NULL, sys_name = ?, sys_descr = ?, sys_object_id = ? WHERE device_id = ?`,
    ).run(
      outcome.at,
      outcome.sysName ?? null,
      outcome.sysDescr ?? null,
      outcome.sysObjectId ?? null,
      deviceId,
    );
  } else {
    db.prepare(
      `UPDATE device_snmp SET last_crawl_at = ?, last_crawl_status = 'failed', last_crawl_error = ? WHERE device_id = ?`,
    ).run(outcome.at, outcome.error ?? null, deviceId);
  }
}
