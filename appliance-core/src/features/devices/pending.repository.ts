/**
 * SQL for pending devices: hosts found by discovery (or announced by agents) that are not yet in
 * the inventory. Tag scoping: a restricted caller sees only rows carrying one of their tags.
 */
import type { DB } from '../../platform/db/database.js';
import type { Identity } from '../../platform/http/identity.js';
import { toSqlDateTime } from '../../platform/time/time.js';
import {
  ensureDeviceTag,
  insertDevice,
  linkedTagIds,
  linkedTags,
  replaceDeviceTags,
  replaceLinkedTags,
  type TagLinks,
} from './devices.repository.js';
import type { DeviceTag, PendingRecord } from './devices.schema.js';
import {
  DEFAULT_SNMP,
  maskSnmpConfig,
  type SnmpConfigRow,
} from '../../platform/snmp/snmp-config.js';

export interface PendingRow extends SnmpConfigRow {
  id: number;
  label: string;
  ip_address: string;
  profile: string;
  enable_snmp: number;
  enable_agent: number;
  agent_uuid: string | null;
  last_checkin_at: number | null;
  agent_version: string | null;
  os_version: string | null;
  hidden: number;
  source: 'discovery' | 'agent' | 'manual';
  net_id: number | null;
  open_ports: string | null;
  sys_descr: string | null;
  first_seen_at: number;
  last_seen_at: number;
}

/** Columns updatePendingDeviceField may write, by field name (the allowlist; never from input). */
export const PENDING_COLUMNS = {
  label: 'label',
  profile: 'profile',
  enable_snmp: 'enable_snmp',
  enable_agent: 'enable_agent',
  snmp_community: 'snmp_community',
  snmp_port: 'snmp_port',
  snmp_version: 'snmp_version',
  snmp_v3_security: 'snmp_v3_security',
  authuser: 'authuser',
  authpass: 'authpass',
  authprot: 'authprot',
  privpass: 'privpass',
  privprot: 'privprot',
} as const;

export function pendingRecord(row: PendingRow, tags: DeviceTag[]): PendingRecord {
  return {
    id: row.id,
    label: row.label,
    ip_address: row.ip_address,
    profile: row.profile,
    enable_snmp: row.enable_snmp === 1,
    enable_agent: row.enable_agent === 1,
    agent_uuid: row.agent_uuid,
    last_checkin_at: row.last_checkin_at === null ? null : toSqlDateTime(row.last_checkin_at),
    agent_version: row.agent_version,
    os_version: row.os_version,
    tags,
    snmpconfig: maskSnmpConfig(row),
    open_ports: row.open_ports === null ? null : (JSON.parse(row.open_ports) as number[]),
  };
}

function scopeSql(identity: Identity): { sql: string; params: unknown[] } {
  if (identity.tagIds === null) return { sql: '1', params: [] };
  return {
    sql: 'EXISTS (SELECT 1 FROM pending_device_tags pt WHERE pt.pending_id = p.id AND pt.tag_id IN (SELECT value FROM json_each(?)))',
    params: [JSON.stringify(identity.tagIds)],
  };
}

/** The default list: rows not hidden, in the caller's scope, oldest first. */
export function listPending(db: DB, identity: Identity): PendingRow[] {
  const scope = scopeSql(identity);
  return db
    .prepare(`SELECT p.* FROM pending_devices p WHERE p.hidden = 0 AND ${scope.sql} ORDER BY p.id`)
    .all(...scope.params) as PendingRow[];
}

/** The row when it exists and is in the caller's scope (out of scope answers like missing). */
export function findVisiblePending(db: DB, identity: Identity, id: number): PendingRow | undefined {
  const scope = scopeSql(identity);
  return db
    .prepare(`SELECT p.* FROM pending_devices p WHERE p.id = ? AND ${scope.sql}`)
    .get(id, ...scope.params) as PendingRow | undefined;
}

const PENDING_TAG_LINKS: TagLinks = { table: 'pending_device_tags', key: 'pending_id' };

export function pendingTagIds(db: DB, pendingId: number): number[] {
  return linkedTagIds(db, PENDING_TAG_LINKS, pendingId);
}

export function tagsOfPending(db: DB, ids: readonly number[]): Map<number, DeviceTag[]> {
  return linkedTags(db, PENDING_TAG_LINKS, ids);
}

export function replacePendingTags(db: DB, pendingId: number, tagIds: readonly number[]): void {
  replaceLinkedTags(db, PENDING_TAG_LINKS, pendingId, tagIds);
}

export function hidePending(db: DB, id: number): void {
  db.prepare('UPDATE pending_devices SET hidden = 1 WHERE id = ?').run(id);
}

/** Removes the pending row of an address (a device now holds it). */
export function deletePendingByIp(db: DB, ip: string): void {
  db.prepare('DELETE FROM pending_devices WHERE ip_address = ?').run(ip);
}

export function deletePending(db: DB, id: number): void {
  db.prepare('DELETE FROM pending_devices WHERE id = ?').run(id);
}

export function updatePendingColumn(
  db: DB,
  id: number,
  column: (typeof PENDING_COLUMNS)[keyof typeof PENDING_COLUMNS],
  value: string | number | null,
): void {
  db.prepare(`UPDATE pending_devices SET ${column} = ? WHERE id = ?`).run(value, id);
}

/** A host one discovery sweep found. */
export interface DiscoveredHost {
  ip: string;
  netId: number;
  label: string;
  profile: string;
  /** The configuration that answered (secrets sealed), or null when SNMP did not answer. */
  snmp: SnmpConfigRow | null;
  sysDescr: string | null;
  /** Open TCP ports when the network's portscan is on, else null. */
  openPorts: number[] | null;
}

/**
 * Records a sweep's hosts in one transaction: new addresses become pending rows; known pending
 * rows (hidden ones too, which stay hidden) get fresher facts but keep every field an operator
 * may have edited, and gain an SNMP configuration only when they have none. Addresses that are
 * devices are skipped. Returns how many rows were created.
 */
export function recordDiscoveredHosts(
  db: DB,
  hosts: readonly DiscoveredHost[],
  now: number,
): number {
  const isDevice = db.prepare('SELECT 1 FROM devices WHERE ip_address = ?');
  const existing = db.prepare(
    'SELECT id, enable_snmp, snmp_community, authuser FROM pending_devices WHERE ip_address = ?',
  );
  const insert = db.prepare(
    `INSERT INTO pending_devices (label, ip_address, profile, enable_snmp, snmp_version, snmp_port, snmp_community, snmp_v3_security, authuser, authpass,
       authprot, privpass, privprot, source, net_id, open_ports, sys_descr, first_seen_at, last_seen_at)
     VALUES (@label, @ip, @profile, @enable_snmp, @snmp_version, @snmp_port, @snmp_community, @snmp_v3_security, @authuser, @authpass,
       @authprot, @privpass, @privprot, 'discovery', @netId, @open_ports, @sysDescr, @now, @now)`,
  );
  const refresh = db.prepare(
    `UPDATE pending_devices SET net_id = @netId, last_seen_at = @now, open_ports = coalesce(@open_ports, open_ports), sys_descr = coalesce(@sysDescr, sys_descr)
     WHERE id = @id`,
  );
  const adoptSnmp = db.prepare(
    `UPDATE pending_devices SET enable_snmp = 1, snmp_version = @snmp_version, snmp_port = @snmp_port, snmp_community = @snmp_community,
       snmp_v3_security = @snmp_v3_security, authuser = @authuser, authpass = @authpass, authprot = @authprot, privpass = @privpass, privprot = @privprot
     WHERE id = @id`,
  );
  return db.transaction(() => {
    let created = 0;
    for (const host of hosts) {
      if (isDevice.get(host.ip)) continue;
      const snmp = host.snmp ?? DEFAULT_SNMP;
      const values = {
        ...host,
        ...snmp,
        enable_snmp: host.snmp ? 1 : 0,
        open_ports: host.openPorts ? JSON.stringify(host.openPorts) : null,
        now,
      };
      const row = existing.get(host.ip) as
        | {
            id: number;
            enable_snmp: number;
            snmp_community: string | null;
            authuser: string | null;
          }
        | undefined;
      if (!row) {
        insert.run(values);
        created++;
        continue;
      }
      refresh.run({ ...values, id: row.id });
      if (host.snmp && row.enable_snmp === 0 && !row.snmp_community && !row.authuser)
        adoptSnmp.run({ ...snmp, id: row.id });
    }
    return created;
  })();
}

// --- agents (features/agents): check-ins, fast-tracked and adopted agents ----------------------

/** What an agent reports in a check-in (spec part 2, POST /api/agent/checkin). */
export interface AgentCheckin {
  agentUuid: string;
  ip: string;
  hostname: string;
  agentVersion: string | null;
  osVersion: string | null;
  now: number;
}

/** The profile of a device an agent announces: Windows agents get the WMI dashboard. */
export function agentProfile(osVersion: string | null): string {
  return osVersion !== null && /windows/i.test(osVersion) ? 'dash_windows_wmi' : 'dash_generic';
}

/**
 * Writes an unadopted agent's check-in as a pending row (`source = 'agent'`): its row (found by
 * `agent_uuid`, else the discovery row of the address) gets the address and the agent's facts; a
 * hidden row stays hidden; a removed one is created again. The address is never taken from a
 * device (the caller answers 409 first). Returns the row id, or null when another agent's pending
 * row holds the address.
 */
export function recordAgentCheckin(db: DB, c: AgentCheckin): number | null {
  return db.transaction(() => {
    const own = db
      .prepare('SELECT id FROM pending_devices WHERE agent_uuid = ? ORDER BY id LIMIT 1')
      .get(c.agentUuid) as { id: number } | undefined;
    const atIp = db
      .prepare('SELECT id, agent_uuid FROM pending_devices WHERE ip_address = ?')
      .get(c.ip) as { id: number; agent_uuid: string | null } | undefined;
    if (atIp && atIp.id !== own?.id) {
      if (atIp.agent_uuid !== null && atIp.agent_uuid !== c.agentUuid) return null;
      if (own) db.prepare('DELETE FROM pending_devices WHERE id = ?').run(atIp.id);
    }
    const id = own?.id ?? atIp?.id;
    const values = {
      uuid: c.agentUuid,
      ip: c.ip,
      hostname: c.hostname,
      version: c.agentVersion,
      os: c.osVersion,
      now: c.now,
    };
    if (id !== undefined) {
      db.prepare(
        `UPDATE pending_devices SET ip_address = @ip, agent_uuid = @uuid, enable_agent = 1, last_checkin_at = @now,
           agent_version = @version, os_version = @os, last_seen_at = @now WHERE id = @id`,
      ).run({ ...values, id });
      return id;
    }
    return Number(
      db
        .prepare(
          `INSERT INTO pending_devices (label, ip_address, profile, enable_agent, agent_uuid, last_checkin_at, agent_version, os_version, source, first_seen_at, last_seen_at)
           VALUES (@hostname, @ip, @profile, 1, @uuid, @now, @version, @os, 'agent', @now, @now)`,
        )
        .run({ ...values, profile: agentProfile(c.osVersion) }).lastInsertRowid,
    );
  })();
}

/** The pending row of an agent (hidden ones too), if any. */
export function findPendingByAgentUuid(db: DB, agentUuid: string): PendingRow | undefined {
  return db
    .prepare('SELECT * FROM pending_devices WHERE agent_uuid = ? ORDER BY id LIMIT 1')
    .get(agentUuid) as PendingRow | undefined;
}

/** The device of an agent (by its `agent_uuid`), if any. */
export function findDeviceOfAgent(
  db: DB,
  agentUuid: string,
): { id: number; ip_address: string; label: string } | undefined {
  return db
    .prepare('SELECT id, ip_address, label FROM devices WHERE agent_uuid = ? ORDER BY id LIMIT 1')
    .get(agentUuid) as { id: number; ip_address: string; label: string } | undefined;
}

/** The device holding an address, if any. */
export function findDeviceAt(
  db: DB,
  ip: string,
): { id: number; agent_uuid: string | null; label: string } | undefined {
  return db.prepare('SELECT id, agent_uuid, label FROM devices WHERE ip_address = ?').get(ip) as
    { id: number; agent_uuid: string | null; label: string } | undefined;
}

/** Moves an adopted agent's device to the address it checked in from (the caller checked it is free). */
export function moveAgentDevice(db: DB, deviceId: number, ip: string, now: number): void {
  db.prepare('UPDATE devices SET ip_address = ?, updated_at = ? WHERE id = ?').run(
    ip,
    now,
    deviceId,
  );
  deletePendingByIp(db, ip);
}

/**
 * Creates the device of an agent that a token or an adoption vouched for (enable_agent on, its
 * uuid, tags by slug, created when missing), or links the device already at the address to the
 * agent; the agent's pending rows go. Returns the device id, or null when the address is held by a
 * device of another agent.
 */
export function createAgentDevice(
  db: DB,
  d: {
    agentUuid: string;
    ip: string;
    label: string;
    profile: string;
    tagSlugs: readonly string[];
    now: number;
  },
): number | null {
  return db.transaction(() => {
    const held = findDeviceAt(db, d.ip);
    let id: number;
    if (held) {
      if (held.agent_uuid !== null && held.agent_uuid !== d.agentUuid) return null;
      db.prepare(
        'UPDATE devices SET agent_uuid = ?, enable_agent = 1, updated_at = ? WHERE id = ?',
      ).run(d.agentUuid, d.now, held.id);
      id = held.id;
    } else {
      id = insertDevice(
        db,
        {
          label: d.label,
          ip_address: d.ip,
          profile: d.profile,
          enable_snmp: false,
          enable_agent: true,
          enable_netflow: false,
          enable_port_monitor: false,
          agent_uuid: d.agentUuid,
        },
        d.now,
      );
    }
    const tagIds = d.tagSlugs.map((slug) => ensureDeviceTag(db, slug, slug));
    if (tagIds.length > 0) {
      const current = linkedTagIds(db, { table: 'device_tags', key: 'device_id' }, id);
      replaceDeviceTags(db, id, [...new Set([...current, ...tagIds])]);
    }
    db.prepare('DELETE FROM pending_devices WHERE agent_uuid = ? OR ip_address = ?').run(
      d.agentUuid,
      d.ip,
    );
    return id;
  })();
}
