/**
 * The device inventory's logic: saving devices (with their SNMP configuration and tags), the
 * delete cascade, tag rules for restricted callers, and the extension points through which later
 * features add their data to device records and their clean-up to device deletion.
 *
 * Invariants:
 * - Deleting a device runs every registered clean-up and deletes the row in ONE transaction:
 *   either the device and all its history go, or nothing does. Device 1 is never deleted.
 * - A tag-restricted caller may only name tags inside their scope, never removes tags outside it,
 *   and always leaves at least one of their own tags on a device (so a write never makes a device
 *   vanish from its writer's view or enter another team's).
 */
import net from 'node:net';
import type { TSchema } from '@sinclair/typebox';
import { watchTables } from '../../platform/db/change-triggers.js';
import type { CoreContext } from '../../platform/context.js';
import type { FieldErrors } from '../../platform/http/envelopes.js';
import type { Identity } from '../../platform/http/identity.js';
import {
  deviceInScope,
  scopeSql,
  type DeviceScope,
  type DeviceScopeResolver,
} from '../../platform/http/scoping.js';
import type { Scheduler } from '../../platform/scheduler/scheduler.js';
import { toIso } from '../../platform/time/time.js';
import { CrawlEngine, type CrawlHandler } from './crawl.engine.js';
import { DeviceIpMap } from './ip-map.cache.js';
import {
  APPLIANCE_DEVICE_ID,
  deleteDeviceRow,
  deleteDeviceTagLinks,
  deleteSnmpConfig,
  ensureDeviceTag,
  deviceTagsBySlugs,
  findDevice,
  findDeviceByIp,
  findSnmpConfig,
  insertDevice,
  listDevices,
  listDeviceStatus,
  pickSnmp,
  profileExists,
  replaceDeviceTags,
  saveSnmpConfig,
  tagIdsOfDevice,
  tagsOfDevices,
  updateDevice,
  type DeviceFields,
  type DeviceListFilter,
  type DeviceRow,
  type TagRow,
} from './devices.repository.js';
import {
  toBool,
  type DeviceListQuery,
  type DeviceSetBody,
  type DeviceTag,
  type ProvidedSchemas,
  type TagIn,
} from './devices.schema.js';
import {
  deletePending,
  deletePendingByIp,
  pendingTagIds,
  type PendingRow,
} from './pending.repository.js';
import { mergeSnmpConfig, type SnmpConfigRow } from '../../platform/snmp/snmp-config.js';
import { WalksRepository } from './walks.repository.js';

/** Relations GET /api/devices eager-loads on request (query flags of the same name). */
export const DEVICE_RELATIONS = [
  'alerts',
  'ping',
  'oids',
  'walks',
  'interfaces',
  'ports',
  'disks',
] as const;
export type DeviceRelation = (typeof DEVICE_RELATIONS)[number];
/** Sections of GET /api/device/{device} that come from trackers, logs, flows and alerts. */
export const DEVICE_SECTIONS = [
  'alerts',
  'syslogconfig',
  'netflow',
  'ping',
  'oids',
  'interfaces',
  'ports',
  'disks',
] as const;
export type DeviceSection = (typeof DEVICE_SECTIONS)[number];

export interface DeviceWindow {
  start: number;
  end: number;
}
/** Loads one relation for many devices at once (one query, not one per device). */
export type RelationLoader = (deviceIds: readonly number[]) => Map<number, unknown>;

/** The latest latency reading of every device that has a latency tracker: [tracker id, latency, loss]. */
export type LatencyReadings = () => Map<
  number,
  readonly [trackerId: number, latency: number | null, loss: number | null]
>;

/** GET /api/devices/status: one array per column, index i describing the same device. */
export interface DeviceStatusColumns {
  id: number[];
  reachability: ('up' | 'down' | null)[];
  icmping_id: (number | null)[];
  latency: (number | null)[];
  loss: (number | null)[];
}
export type SectionProvider = (deviceId: number, window: DeviceWindow) => unknown;
/** Deletes a feature's rows of a device; runs inside the delete transaction (synchronous, no await). */
export type DeviceCleanup = (deviceId: number) => void;
/** Rows and stored bytes of one log category of a device (GET /api/device/{device}/stats). */
export type DeviceLogStats = (deviceId: number) => { rows: number; bytes: number };

export type TagPlan =
  | { ok: true; tagIds: number[]; tags: { slug: string; name: string }[] }
  | { ok: false; message: string };

/** What a tag-restricted caller reads when a device outside their scope holds the address. */
export const ADDRESS_UNAVAILABLE = 'This IP address cannot be used.';

export class DeviceRuleError extends Error {
  constructor(
    readonly status: 409 | 422,
    message: string,
    readonly fields?: FieldErrors,
  ) {
    super(message);
  }
}

/** The canonical text of an IP literal (IPv6 compressed, lower case), or null when `text` is not one. */
export function canonicalIp(text: string): string | null {
  const trimmed = text.trim();
  if (net.isIPv4(trimmed)) return trimmed;
  if (net.isIPv6(trimmed)) return new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
  return null;
}

/** Bytes in the unit a person reads (1024 steps). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0
    ? `${bytes} B`
    : `${value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2)} ${units[unit]}`;
}

export interface DeviceRecordBase {
  id: number;
  label: string;
  ip_address: string;
  profile: string;
  enable_snmp: boolean;
  enable_agent: boolean;
  enable_netflow: boolean;
  enable_port_monitor: boolean;
  agent_uuid: string | null;
  tags: DeviceTag[];
}

export class DevicesService {
  readonly walks: WalksRepository;
  /** IP address -> device, for receivers and scoping (see device-ip-map.ts). */
  readonly ipMap: DeviceIpMap;
  readonly crawl: CrawlEngine;
  private readonly cleanups = new Map<
    string,
    { purge: DeviceCleanup; after: ((deviceId: number) => void) | undefined }
  >();
  private readonly relations = new Map<DeviceRelation, RelationLoader>();
  private readonly relationOwners = new Set<DeviceRelation>();
  private readonly sections = new Map<DeviceSection, SectionProvider>();
  private readonly sectionOwners = new Set<DeviceSection>();
  private readonly logStats = new Map<string, DeviceLogStats>();
  private readonly schemas: { relations: ProvidedSchemas; sections: ProvidedSchemas } = {
    relations: {},
    sections: {},
  };
  private readonly scopes = new Map<string, { version: number; scope: DeviceScope }>();
  /** Serialised unfiltered device lists per tag scope; see `cachedListJson`. */
  private readonly listCache = new Map<string, Buffer>();
  private latencyReadings: LatencyReadings | null = null;

  constructor(
    private readonly ctx: CoreContext,
    scheduler: Scheduler,
  ) {
    const { db } = ctx;
    this.walks = new WalksRepository(db);
    this.ipMap = new DeviceIpMap(db, {
      onListenerError: (err) => ctx.log.error({ err }, 'device IP map subscriber failed'),
    });
    this.crawl = new CrawlEngine({
      db,
      clock: ctx.clock,
      secrets: ctx.secrets,
      log: ctx.log,
      scheduler,
      walks: this.walks,
    });

    // What this feature itself keeps per device; later features register theirs the same way.
    // A deleted device's walks_log rows stay until their partition is pruned (spec: partitioned
    // tables shed data only by pruning); only its crawl job goes.
    this.registerDeviceCleanup(
      'walks',
      () => {},
      (id) => this.crawl.unschedule(id),
    );
    this.registerDeviceCleanup('snmp-config', (id) => deleteSnmpConfig(db, id));
    this.registerDeviceCleanup('pending-duplicates', (id) => {
      const device = findDevice(db, id);
      if (device) deletePendingByIp(db, device.ip_address);
    });
    this.registerDeviceCleanup('tags', (id) => deleteDeviceTagLinks(db, id));
    this.registerDeviceLogStats('walks_log', (id) => this.walks.statsOf(id));
    this.installListInvalidation();

    // Relations and sections with data here; the others answer their real empty value until a
    // feature provides them.
    const empty =
      (value: () => unknown): RelationLoader =>
      (ids) =>
        new Map(ids.map((id) => [id, value()]));
    this.relations.set(
      'alerts',
      empty(() => []),
    );
    this.relations.set(
      'ping',
      empty(() => null),
    );
    this.relations.set(
      'oids',
      empty(() => []),
    );
    this.relations.set(
      'ports',
      empty(() => []),
    );
    this.relations.set('walks', (ids) => this.walks.summaries(ids));
    this.relations.set(
      'interfaces',
      empty(() => []),
    );
    this.relations.set(
      'disks',
      empty(() => []),
    );
    this.sections.set('alerts', () => []);
    this.sections.set('syslogconfig', () => ({ severity: null }));
    this.sections.set('netflow', () => ({ bytes: 0, count: 0, top_partners: [] }));
    this.sections.set('ping', () => []);
    this.sections.set('oids', () => []);
    this.sections.set('ports', () => []);
    this.sections.set('interfaces', () => []);
    this.sections.set('disks', () => []);
  }

  // --- extension points -----------------------------------------------------------------------

  /**
   * Adds a feature's clean-up to device deletion. `purge` deletes the feature's rows of the device
   * inside the delete transaction; `after` (optional) releases in-memory state (scheduled jobs)
   * once the deletion is committed.
   */
  registerDeviceCleanup(
    name: string,
    purge: DeviceCleanup,
    after?: (deviceId: number) => void,
  ): void {
    if (this.cleanups.has(name)) throw new Error(`device clean-up ${name} is already registered`);
    this.cleanups.set(name, { purge, after });
  }

  /**
   * Adds a feature's share of every device crawl: the subtrees it needs walked and what it stores
   * from them, inside the crawl's transaction (the trackers feature: interface and disk trackers).
   */
  registerCrawlHandler(name: string, handler: CrawlHandler): void {
    this.crawl.registerHandler(name, handler);
  }

  /** Names of the registered clean-ups, in the order they run. */
  deviceCleanupNames(): string[] {
    return [...this.cleanups.keys()];
  }

  /**
   * Provides the data of a GET /api/devices relation (once per relation), with the schema of one
   * device's value (the route's response schema, so /openapi.json types it).
   */
  provideDeviceRelation(name: DeviceRelation, loader: RelationLoader, schema?: TSchema): void {
    if (this.relationOwners.has(name))
      throw new Error(`device relation ${name} is already provided`);
    this.relationOwners.add(name);
    this.relations.set(name, loader);
    if (schema) this.schemas.relations[name] = schema;
  }

  /** Provides the latest latency readings for GET /api/devices/status (once; the trackers do). */
  provideLatencyReadings(loader: LatencyReadings): void {
    if (this.latencyReadings) throw new Error('latency readings are already provided');
    this.latencyReadings = loader;
  }

  /** Provides a section of GET /api/device/{device} (once per section), with its schema. */
  provideDeviceSection(name: DeviceSection, provider: SectionProvider, schema?: TSchema): void {
    if (this.sectionOwners.has(name)) throw new Error(`device section ${name} is already provided`);
    this.sectionOwners.add(name);
    this.sections.set(name, provider);
    if (schema) this.schemas.sections[name] = schema;
  }

  /** The schemas providers gave for relations and sections (read when the routes are declared). */
  providedSchemas(): { relations: ProvidedSchemas; sections: ProvidedSchemas } {
    return { relations: { ...this.schemas.relations }, sections: { ...this.schemas.sections } };
  }

  /** Adds a log category to GET /api/device/{device}/stats. */
  registerDeviceLogStats(logName: string, stats: DeviceLogStats): void {
    if (this.logStats.has(logName) || logName === 'Total')
      throw new Error(`device log stats ${logName} is already registered`);
    this.logStats.set(logName, stats);
  }

  // --- reading --------------------------------------------------------------------------------

  /**
   * The devices carrying any of `tagIds`, with their addresses: the resolver of platform scoping
   * (scopeOf / scopeSql). Built from the IP map and kept per tag set until the map changes.
   */
  readonly scopeResolver: DeviceScopeResolver = (tagIds) => {
    const key = [...tagIds].sort((a, b) => a - b).join(',');
    const version = this.ipMap.version;
    const cached = this.scopes.get(key);
    if (cached && cached.version === version) return cached.scope;
    const wanted = new Set(tagIds);
    const deviceIds = new Set<number>();
    const ips = new Set<string>();
    for (const entry of this.ipMap.snapshot().entries) {
      if (!entry.tagIds.some((id) => wanted.has(id))) continue;
      deviceIds.add(entry.id);
      ips.add(entry.ip);
    }
    const scope = { deviceIds, ips };
    if (this.scopes.size >= 64) this.scopes.clear();
    this.scopes.set(key, { version, scope });
    return scope;
  };

  /** The list scope of a caller (null: unrestricted). */
  scopeOfIdentity(identity: Identity): DeviceScope | null {
    return identity.tagIds === null ? null : this.scopeResolver(identity.tagIds);
  }

  /** The device when it exists and the caller may see it; null for missing and out of scope alike. */
  visibleDevice(identity: Identity, deviceId: number): DeviceRow | null {
    const device = findDevice(this.ctx.db, deviceId);
    if (!device || !deviceInScope(identity, tagIdsOfDevice(this.ctx.db, deviceId))) return null;
    return device;
  }

  record(row: DeviceRow, tags: DeviceTag[]): DeviceRecordBase {
    return {
      id: row.id,
      label: row.label,
      ip_address: row.ip_address,
      profile: row.profile,
      enable_snmp: row.enable_snmp === 1,
      enable_agent: row.enable_agent === 1,
      enable_netflow: row.enable_netflow === 1,
      enable_port_monitor: row.enable_port_monitor === 1,
      agent_uuid: row.agent_uuid,
      tags,
    };
  }

  list(
    identity: Identity,
    query: DeviceListQuery,
  ): (DeviceRecordBase & Partial<Record<DeviceRelation, unknown>>)[] {
    const rows = listDevices(this.ctx.db, this.listFilter(identity, query));
    const ids = rows.map((r) => r.id);
    const tags = tagsOfDevices(this.ctx.db, ids);
    const loaded = DEVICE_RELATIONS.filter(
      (name) => query[name] !== undefined && toBool(query[name]),
    ).map((name) => [name, (this.relations.get(name) as RelationLoader)(ids)] as const);
    return rows.map((row) => {
      const record: DeviceRecordBase & Partial<Record<DeviceRelation, unknown>> = this.record(
        row,
        tags.get(row.id) ?? [],
      );
      for (const [name, values] of loaded)
        record[name] = values.get(row.id) ?? (name === 'ping' ? null : []);
      return record;
    });
  }

  /** The list's filters and the caller's tag scope, as the repository takes them. */
  private listFilter(identity: Identity, query: DeviceListQuery): DeviceListFilter {
    return {
      scope: scopeSql(this.scopeOfIdentity(identity), 'd.id'),
      tag: query.tag,
      status: query.status,
      search: query.search,
    };
  }

  /**
   * Reachability and the latest latency reading of the listed devices (same filters and tag scope
   * as `list`), as columns: for 20,000 devices this is a fraction of the `?ping=true` list, built
   * without a row object per device.
   */
  status(identity: Identity, query: DeviceListQuery): DeviceStatusColumns {
    const rows = listDeviceStatus(this.ctx.db, this.listFilter(identity, query));
    const readings: ReturnType<LatencyReadings> =
      this.latencyReadings?.() ?? new Map<never, never>();
    const columns: DeviceStatusColumns = {
      id: new Array<number>(rows.length),
      reachability: new Array<'up' | 'down' | null>(rows.length),
      icmping_id: new Array<number | null>(rows.length),
      latency: new Array<number | null>(rows.length),
      loss: new Array<number | null>(rows.length),
    };
    rows.forEach(([id, reachability], i) => {
      const reading = readings.get(id);
      columns.id[i] = id;
      columns.reachability[i] = reachability;
      columns.icmping_id[i] = reading ? reading[0] : null;
      columns.latency[i] = reading ? reading[1] : null;
      columns.loss[i] = reading ? reading[2] : null;
    });
    return columns;
  }

  /**
   * The serialised answer of an unfiltered `GET /api/devices` (no tag, status, search or
   * relation), cached per tag scope: with tens of thousands of devices, building and serialising
   * the list costs more than 100 ms, and consoles ask for it often. Null when the query filters.
   * The answer is held UTF-8 encoded.
   * Invalidation is synchronous (see installListInvalidation), so a cached list is never stale.
   */
  cachedListJson(
    identity: Identity,
    query: DeviceListQuery,
    serialize: (devices: DeviceRecordBase[]) => string,
  ): Buffer | null {
    if (
      query.tag !== undefined ||
      query.status !== undefined ||
      (query.search !== undefined && query.search !== '')
    )
      return null;
    if (DEVICE_RELATIONS.some((name) => query[name] !== undefined && toBool(query[name])))
      return null;
    const key = identity.tagIds === null ? '*' : identity.tagIds.join(',');
    let json = this.listCache.get(key);
    if (json === undefined) {
      // Kept encoded: a 20,000-device answer is ~5 MB, which would otherwise be UTF-8 encoded again
      // on every request.
      json = Buffer.from(serialize(this.list(identity, query)), 'utf8');
      if (this.listCache.size >= 64) this.listCache.clear();
      this.listCache.set(key, json);
    }
    return json;
  }

  /**
   * TEMP triggers on this connection (none are stored in the database file) call back on every
   * write that can change an unfiltered list: devices (the listed columns, not reachability),
   * their tag links and the tags themselves.
   */
  private installListInvalidation(): void {
    watchTables(
      this.ctx.db,
      'device_list',
      [
        {
          table: 'devices',
          updateOf:
            'label, ip_address, profile, enable_snmp, enable_agent, enable_netflow, enable_port_monitor, agent_uuid',
        },
        { table: 'device_tags' },
        { table: 'tags' },
      ],
      () => this.listCache.clear(),
    );
  }

  detail(row: DeviceRow, window: DeviceWindow) {
    const tags = tagsOfDevices(this.ctx.db, [row.id]).get(row.id) ?? [];
    const section = (name: DeviceSection) =>
      (this.sections.get(name) as SectionProvider)(row.id, window);
    return {
      ...this.record(row, tags),
      snmp: findSnmpConfig(this.ctx.db, row.id) ?? null,
      alerts: section('alerts'),
      syslogconfig: section('syslogconfig'),
      netflow: section('netflow'),
      ping: section('ping'),
      oids: section('oids'),
      interfaces: section('interfaces'),
      ports: section('ports'),
      disks: section('disks'),
      window: { start_time: toIso(window.start), end_time: toIso(window.end) },
    };
  }

  stats(
    deviceId: number,
  ): { log_name: string; total_rows: number; size: number; formatted: string }[] {
    const rows = [...this.logStats].map(([logName, stats]) => {
      const { rows: count, bytes } = stats(deviceId);
      return { log_name: logName, total_rows: count, size: bytes, formatted: formatBytes(bytes) };
    });
    const totalRows = rows.reduce((n, r) => n + r.total_rows, 0);
    const totalBytes = rows.reduce((n, r) => n + r.size, 0);
    return [
      ...rows,
      {
        log_name: 'Total',
        total_rows: totalRows,
        size: totalBytes,
        formatted: formatBytes(totalBytes),
      },
    ];
  }

  // --- tags -----------------------------------------------------------------------------------

  /**
   * Plans a device's new tag set. `mode` replace: `requested` becomes the set; add: it joins the
   * set; remove: it leaves the set (slugs must exist). `current` is null for a new record. For a
   * restricted caller, out-of-scope tags already on the record are kept.
   */
  planTags(
    identity: Identity,
    requested: readonly TagIn[],
    current: readonly number[] | null,
    mode: 'replace' | 'add' | 'remove',
  ): TagPlan {
    const wanted = new Map<string, string>();
    for (const tag of requested) {
      const slug = typeof tag === 'string' ? tag : tag.slug;
      const name = typeof tag === 'string' ? tag : (tag.name ?? tag.slug);
      if (!wanted.has(slug)) wanted.set(slug, name);
    }
    const existing = new Map<string, TagRow>(
      deviceTagsBySlugs(this.ctx.db, [...wanted.keys()]).map((t) => [t.slug, t]),
    );
    const scope = identity.tagIds === null ? null : new Set(identity.tagIds);
    for (const slug of wanted.keys()) {
      const tag = existing.get(slug);
      if (mode === 'remove' && !tag)
        return { ok: false, message: `The selected tag ${slug} is invalid.` };
      if (scope && (!tag || !scope.has(tag.id)))
        return { ok: false, message: `The tag ${slug} is outside your tag scope.` };
    }
    const namedIds = [...wanted.keys()]
      .map((slug) => existing.get(slug)?.id)
      .filter((id): id is number => id !== undefined);
    const toCreate = [...wanted]
      .filter(([slug]) => !existing.has(slug))
      .map(([slug, name]) => ({ slug, name }));
    const currentIds = [...(current ?? [])];
    let finalIds: number[];
    if (mode === 'remove') finalIds = currentIds.filter((id) => !namedIds.includes(id));
    else if (mode === 'add') finalIds = [...new Set([...currentIds, ...namedIds])];
    else
      finalIds = [
        ...new Set([...namedIds, ...(scope ? currentIds.filter((id) => !scope.has(id)) : [])]),
      ];
    if (scope && !finalIds.some((id) => scope.has(id))) {
      return {
        ok: false,
        message: 'A tag-restricted user must leave at least one of their own tags on a device.',
      };
    }
    return { ok: true, tagIds: finalIds, tags: toCreate };
  }

  /** Creates the planned new tags (inside the caller's transaction) and returns every tag id of the set. */
  applyTagPlan(plan: Extract<TagPlan, { ok: true }>): number[] {
    const { db } = this.ctx;
    const ids = [...plan.tagIds];
    for (const tag of plan.tags) ids.push(ensureDeviceTag(db, tag.slug, tag.name));
    return [...new Set(ids)];
  }

  // --- writing --------------------------------------------------------------------------------

  /** Creates (no id) or updates a device. Throws DeviceRuleError (422 fields, 409 duplicate IP). */
  save(
    identity: Identity,
    body: DeviceSetBody,
  ): { id: number; created: boolean; tags: DeviceTag[] } {
    const { db, clock, secrets } = this.ctx;
    const errors: FieldErrors = {};
    const fail = (field: string, message: string) => (errors[field] ??= []).push(message);

    const existing = body.id === undefined ? null : this.visibleDevice(identity, body.id);
    if (body.id !== undefined && !existing) fail('id', 'The selected id is invalid.');
    const ip = canonicalIp(body.ip_address);
    if (!ip) fail('ip_address', 'The ip address must be a valid IP address.');
    if (existing?.id === APPLIANCE_DEVICE_ID && ip && ip !== existing.ip_address)
      fail('ip_address', 'The IP address of the appliance device (id 1) cannot be changed.');
    const label = body.label.trim();
    if (label === '') fail('label', 'The label field is required.');
    if (!profileExists(db, body.profile)) fail('profile', 'The selected profile is invalid.');

    const enableSnmp = body.enable_snmp === undefined ? false : toBool(body.enable_snmp);
    const storedSnmp = existing ? findSnmpConfig(db, existing.id) : undefined;
    let snmp: SnmpConfigRow | null = null;
    if (enableSnmp) {
      const merged = mergeSnmpConfig(secrets, storedSnmp, body.snmpconfig ?? {});
      if ('errors' in merged) Object.assign(errors, merged.errors);
      else snmp = merged.config;
    }

    let plan: TagPlan | null = null;
    if (body.tags !== undefined)
      plan = this.planTags(
        identity,
        body.tags,
        existing ? tagIdsOfDevice(db, existing.id) : null,
        'replace',
      );
    else if (!existing && identity.tagIds !== null)
      plan = {
        ok: false,
        message: 'A tag-restricted user must give the device at least one of their tags.',
      };
    if (plan && !plan.ok) fail('tags', plan.message);

    if (Object.keys(errors).length > 0)
      throw new DeviceRuleError(
        422,
        Object.values(errors)[0]?.[0] ?? 'The given data was invalid.',
        errors,
      );
    const address = ip as string;
    const holder = findDeviceByIp(db, address);
    if (holder && holder.id !== existing?.id)
      throw new DeviceRuleError(409, this.takenAddressMessage(identity, holder.id, address));

    const fields: DeviceFields = {
      label,
      ip_address: address,
      profile: body.profile,
      enable_snmp: enableSnmp,
      enable_agent:
        body.enable_agent === undefined ? existing?.enable_agent === 1 : toBool(body.enable_agent),
      enable_netflow:
        body.enable_netflow === undefined
          ? existing?.enable_netflow === 1
          : toBool(body.enable_netflow),
      enable_port_monitor:
        body.enable_port_monitor === undefined
          ? existing?.enable_port_monitor === 1
          : toBool(body.enable_port_monitor),
      agent_uuid: body.agent_uuid === undefined ? (existing?.agent_uuid ?? null) : body.agent_uuid,
    };
    const now = clock.now();
    const snmpChanged =
      enableSnmp &&
      (!existing ||
        existing.enable_snmp !== 1 ||
        existing.ip_address !== address ||
        !storedSnmp ||
        JSON.stringify(pickSnmp(storedSnmp)) !== JSON.stringify(snmp));
    const id = db.transaction(() => {
      // Re-checked inside the transaction: the unique index is the last word, this gives the 409.
      const again = findDeviceByIp(db, address);
      if (again && again.id !== existing?.id)
        throw new DeviceRuleError(409, this.takenAddressMessage(identity, again.id, address));
      const deviceId = existing ? existing.id : insertDevice(db, fields, now);
      if (existing) updateDevice(db, deviceId, fields, now);
      if (snmp) saveSnmpConfig(db, deviceId, snmp, now);
      if (plan?.ok) replaceDeviceTags(db, deviceId, this.applyTagPlan(plan));
      // A device now holds this address: a pending row for it is no longer pending.
      deletePendingByIp(db, address);
      return deviceId;
    })();

    if (enableSnmp) {
      this.crawl.schedule(id);
      if (snmpChanged) this.crawl.queueNow(id);
    } else {
      this.crawl.unschedule(id);
    }
    return { id, created: !existing, tags: tagsOfDevices(db, [id]).get(id) ?? [] };
  }

  /**
   * The refusal of an address another device holds. A caller who may see that device reads which
   * address is taken; a tag-restricted caller who may not reads a text that names no device (the
   * refusal itself still tells that the address is taken: addresses are unique across devices).
   */
  takenAddressMessage(identity: Identity, holderId: number, address: string): string {
    return deviceInScope(identity, tagIdsOfDevice(this.ctx.db, holderId))
      ? `A device with the IP address ${address} already exists.`
      : ADDRESS_UNAVAILABLE;
  }

  /**
   * Turns a pending row into a device (its SNMP configuration and tags, or `requestedTags`) and
   * removes the row. Refused when a device holds the address or the row's settings are incomplete.
   */
  importPending(
    identity: Identity,
    pending: PendingRow,
    requestedTags: readonly TagIn[] | undefined,
  ): { ok: true; id: number } | { ok: false; message: string } {
    const { db, clock, secrets } = this.ctx;
    const holder = findDeviceByIp(db, pending.ip_address);
    if (holder)
      return {
        ok: false,
        message: this.takenAddressMessage(identity, holder.id, pending.ip_address),
      };
    if (!profileExists(db, pending.profile))
      return { ok: false, message: 'The selected profile is invalid.' };
    let snmp: SnmpConfigRow | null = null;
    if (pending.enable_snmp === 1) {
      const merged = mergeSnmpConfig(secrets, pickSnmp(pending), {});
      if ('errors' in merged)
        return {
          ok: false,
          message: Object.values(merged.errors)[0]?.[0] ?? 'The SNMP configuration is incomplete.',
        };
      snmp = merged.config;
    }
    const currentTags = pendingTagIds(db, pending.id);
    const plan: TagPlan =
      requestedTags === undefined
        ? { ok: true, tagIds: currentTags, tags: [] }
        : this.planTags(identity, requestedTags, currentTags, 'replace');
    if (!plan.ok) return plan;
    const now = clock.now();
    const fields: DeviceFields = {
      label: pending.label,
      ip_address: pending.ip_address,
      profile: pending.profile,
      enable_snmp: snmp !== null,
      enable_agent: pending.enable_agent === 1,
      enable_netflow: false,
      enable_port_monitor: false,
      agent_uuid: pending.agent_uuid,
    };
    const id = db.transaction(() => {
      if (findDeviceByIp(db, pending.ip_address)) return null;
      const deviceId = insertDevice(db, fields, now);
      if (snmp) saveSnmpConfig(db, deviceId, snmp, now);
      replaceDeviceTags(db, deviceId, this.applyTagPlan(plan));
      deletePending(db, pending.id);
      return deviceId;
    })();
    if (id === null) {
      const taken = findDeviceByIp(db, pending.ip_address);
      return {
        ok: false,
        message: taken
          ? this.takenAddressMessage(identity, taken.id, pending.ip_address)
          : ADDRESS_UNAVAILABLE,
      };
    }
    if (snmp) {
      this.crawl.schedule(id);
      this.crawl.queueNow(id);
    }
    return { ok: true, id };
  }

  /** Deletes a device with its history. */
  delete(deviceId: number): 'deleted' | 'missing' | 'protected' {
    if (deviceId === APPLIANCE_DEVICE_ID) return 'protected';
    const { db } = this.ctx;
    const deleted = db.transaction(() => {
      if (!findDevice(db, deviceId)) return false;
      for (const { purge } of this.cleanups.values()) purge(deviceId);
      return deleteDeviceRow(db, deviceId);
    })();
    if (!deleted) return 'missing';
    for (const [name, { after }] of this.cleanups) {
      try {
        after?.(deviceId);
      } catch (err) {
        this.ctx.log.error(
          { err, cleanup: name, deviceId },
          'device clean-up after deletion failed',
        );
      }
    }
    return 'deleted';
  }
}
