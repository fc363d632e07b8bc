/**
 * What the settings endpoints read from the host: interfaces (`ip -j addr`, through the spawn
 * helper), the ifupdown configuration (`/etc/network/interfaces`), the time zone database
 * (`/usr/share/zoneinfo/tzdata.zi`: its zones and links, the names the system accepts), the
 * current zone, the time-sync configuration (systemd-timesyncd or chrony), and whether this
 * process runs as a systemd unit. Paths are injectable so tests read files they wrote.
 *
 * Invariant: reading only. Nothing here changes the host; changes go through the root helper.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runTool } from '../../platform/process/spawn.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import type { NetworkConfigType } from '../../platform/host/root-helper.protocol.js';
import { prefixToNetmask } from './settings.rules.js';

export interface HostPaths {
  networkInterfaces: string;
  zoneinfo: string;
  timezoneFile: string;
  localtime: string;
  timesyncdConf: string;
  chronyConf: string;
  systemdRun: string;
  cgroup: string;
}

export const DEFAULT_HOST_PATHS: HostPaths = {
  networkInterfaces: '/etc/network/interfaces',
  zoneinfo: '/usr/share/zoneinfo',
  timezoneFile: '/etc/timezone',
  localtime: '/etc/localtime',
  timesyncdConf: '/etc/systemd/timesyncd.conf',
  chronyConf: '/etc/chrony/chrony.conf',
  systemdRun: '/run/systemd/system',
  cgroup: '/proc/self/cgroup',
};

export interface HostAddress {
  address: string;
  netmask: string;
}

export interface HostInterface {
  name: string;
  ipv4: HostAddress[];
  ipv6: HostAddress[];
  online: boolean;
}

interface IpAddrJson {
  ifname?: unknown;
  flags?: unknown;
  operstate?: unknown;
  addr_info?: { family?: unknown; local?: unknown; prefixlen?: unknown }[];
}

/** Interfaces from `ip -j addr show` (iproute2). */
export async function readInterfaces(): Promise<HostInterface[]> {
  const result = await runTool(SYSTEM_TOOLS.ip, {
    args: ['-j', 'addr', 'show'],
    timeoutMs: 10_000,
  });
  if (result.code !== 0)
    throw new ToolFailure(`ip -j addr failed: ${result.stderr.split('\n')[0] ?? ''}`.trim());
  return parseIpAddrJson(result.stdout);
}

export function parseIpAddrJson(text: string): HostInterface[] {
  const parsed = JSON.parse(text) as IpAddrJson[];
  if (!Array.isArray(parsed)) throw new ToolFailure('ip -j addr answered no list');
  return parsed
    .filter((link) => typeof link.ifname === 'string')
    .map((link) => {
      const flags = Array.isArray(link.flags) ? (link.flags as string[]) : [];
      const info = Array.isArray(link.addr_info) ? link.addr_info : [];
      const family = (name: string) =>
        info
          .filter((a) => a.family === name && typeof a.local === 'string')
          .map((a) => ({
            address: a.local as string,
            netmask:
              name === 'inet' ? prefixToNetmask(Number(a.prefixlen)) : String(Number(a.prefixlen)),
          }));
      return {
        name: link.ifname as string,
        ipv4: family('inet'),
        ipv6: family('inet6'),
        // Loopback and some virtual links report operstate UNKNOWN; LOWER_UP is the carrier.
        online: link.operstate === 'UP' || flags.includes('LOWER_UP'),
      };
    });
}

export interface IfupdownStanza {
  'allow-hotplug': boolean;
  auto: boolean;
  type: NetworkConfigType;
  address: string | null;
  netmask: string | null;
  gateway: string | null;
  'dns-nameservers': string[];
}

export const UNCONFIGURED: IfupdownStanza = {
  'allow-hotplug': false,
  auto: false,
  type: 'unconfigured',
  address: null,
  netmask: null,
  gateway: null,
  'dns-nameservers': [],
};

/**
 * The IPv4 stanzas of an ifupdown file (`auto`, `allow-hotplug`, `iface X inet static|dhcp|manual`
 * and its `address`, `netmask`, `gateway`, `dns-nameservers`); `source` lines are not followed.
 * A missing file is an empty map (every interface unconfigured).
 */
export function readIfupdown(file: string): Map<string, IfupdownStanza> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return new Map();
  }
  return parseIfupdown(text);
}

export function parseIfupdown(text: string): Map<string, IfupdownStanza> {
  const stanzas = new Map<string, IfupdownStanza>();
  const get = (name: string) => {
    let stanza = stanzas.get(name);
    if (!stanza) {
      stanza = { ...UNCONFIGURED, 'dns-nameservers': [] };
      stanzas.set(name, stanza);
    }
    return stanza;
  };
  let current: IfupdownStanza | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const [word, ...rest] = line.split(/\s+/);
    if (word === 'auto' || word === 'allow-hotplug') {
      for (const name of rest) get(name)[word] = true;
      current = null;
    } else if (word === 'iface') {
      const [name, family, method] = rest;
      if (
        name &&
        family === 'inet' &&
        (method === 'static' || method === 'dhcp' || method === 'manual')
      ) {
        current = get(name);
        current.type = method;
      } else current = null;
    } else if (word === 'mapping' || word === 'source' || word === 'source-directory') {
      current = null;
    } else if (current) {
      if (word === 'address' || word === 'netmask' || word === 'gateway')
        current[word] = rest[0] ?? null;
      else if (word === 'dns-nameservers') current['dns-nameservers'] = rest;
    }
  }
  return stanzas;
}

/** The zone names of the system's zone database (zones and links of tzdata.zi), sorted. */
export function readZones(zoneinfo: string): { zones: string[]; source: 'tzdata' | 'intl' } {
  try {
    const text = fs.readFileSync(path.join(zoneinfo, 'tzdata.zi'), 'utf8');
    const names = new Set<string>();
    for (const line of text.split('\n')) {
      const parts = line.split(' ');
      if (parts[0] === 'Z' && parts[1]) names.add(parts[1]);
      else if (parts[0] === 'L' && parts[2]) names.add(parts[2]);
    }
    if (names.size > 0) return { zones: [...names].sort(), source: 'tzdata' };
  } catch {
    // no zone database on this host: fall back to the runtime's list below
  }
  return { zones: Intl.supportedValuesOf('timeZone').slice().sort(), source: 'intl' };
}

/** The host's zone: /etc/timezone, else the /etc/localtime link, else the runtime's. */
export function readCurrentZone(paths: HostPaths): string {
  try {
    const text = fs.readFileSync(paths.timezoneFile, 'utf8').trim();
    if (text !== '') return text;
  } catch {
    // absent: try the link
  }
  try {
    const target = fs.readlinkSync(paths.localtime);
    const marker = 'zoneinfo/';
    const at = target.indexOf(marker);
    if (at !== -1) return target.slice(at + marker.length);
  } catch {
    // absent or not a link
  }
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** NTP servers the host's time sync is configured with (timesyncd `NTP=`, chrony `server`/`pool`). */
export function readNtpServers(paths: HostPaths): string[] {
  const servers: string[] = [];
  try {
    for (const line of fs.readFileSync(paths.timesyncdConf, 'utf8').split('\n')) {
      const m = /^\s*NTP\s*=\s*(.*)$/.exec(line);
      if (m?.[1]) servers.push(...m[1].trim().split(/\s+/).filter(Boolean));
    }
  } catch {
    // not installed
  }
  try {
    for (const line of fs.readFileSync(paths.chronyConf, 'utf8').split('\n')) {
      const m = /^\s*(?:server|pool)\s+(\S+)/.exec(line);
      if (m?.[1]) servers.push(m[1]);
    }
  } catch {
    // not installed
  }
  return [...new Set(servers)];
}

/**
 * The systemd unit this process runs in, or null when systemd is not the init system (no
 * /run/systemd/system, as in containers and CI) or the process is not in a service's cgroup.
 */
export function detectSystemdUnit(paths: HostPaths): string | null {
  if (!fs.existsSync(paths.systemdRun)) return null;
  let text: string;
  try {
    text = fs.readFileSync(paths.cgroup, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const cgroupPath = line.split(':')[2] ?? '';
    const unit = cgroupPath.split('/').find((part) => /^[A-Za-z0-9@._-]+\.service$/.test(part));
    if (unit) return unit;
  }
  return null;
}

export interface UnitStatus {
  status: string;
  pid: number | null;
}

/** `systemctl show` of one unit: its ActiveState and MainPID. */
export async function readUnitStatus(unit: string): Promise<UnitStatus> {
  const result = await runTool(SYSTEM_TOOLS.systemctl, {
    args: ['show', '--property=ActiveState,MainPID', '--', unit],
    timeoutMs: 10_000,
  });
  if (result.code !== 0)
    throw new ToolFailure(
      `systemctl is not reachable: ${result.stderr.split('\n')[0] ?? 'no answer'}`.trim(),
    );
  const values = new Map(
    result.stdout
      .split('\n')
      .map((line) => line.split('='))
      .filter((parts) => parts.length >= 2)
      .map(([key, ...value]) => [key as string, value.join('=')]),
  );
  const pid = Number(values.get('MainPID'));
  return {
    status: values.get('ActiveState') ?? 'unknown',
    pid: Number.isInteger(pid) && pid > 0 ? pid : null,
  };
}
