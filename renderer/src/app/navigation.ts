/** The console's pages: the navigation, the command palette and the `g <key>` shortcuts share it. */
import { isDesktop } from '../lib/bridge.js';
import type { Permission } from '../lib/caller.js';

export interface PageEntry {
  path: string;
  label: string;
  group: 'Monitor' | 'Logs' | 'Tools' | 'Inventory' | 'Administration' | 'Desktop' | 'Alerting';
  /** Shown when the caller holds any of these (none = everyone). */
  anyOf?: Permission[];
  /** `g <key>` jumps here. */
  key?: string;
  icon: string;
}

export const PAGES: PageEntry[] = [
  { path: '/', label: 'Overview', group: 'Monitor', key: 'o', icon: '◉' },
  {
    path: '/devices',
    label: 'Devices',
    group: 'Monitor',
    anyOf: ['devices', 'overwatch'],
    key: 'd',
    icon: '▤',
  },
  { path: '/dashboards', label: 'Dashboards', group: 'Monitor', key: 'b', icon: '▦' },
  {
    path: '/urls',
    label: 'URL monitoring',
    group: 'Monitor',
    anyOf: ['urls'],
    key: 'u',
    icon: '⌁',
  },
  { path: '/logs/syslog', label: 'Syslog', group: 'Logs', anyOf: ['logs'], key: 'l', icon: '≡' },
  { path: '/logs/windows', label: 'Windows events', group: 'Logs', anyOf: ['logs'], icon: '⊞' },
  { path: '/logs/ids', label: 'IDS events', group: 'Logs', anyOf: ['logs'], key: 'i', icon: '⚠' },
  { path: '/flows', label: 'Flows', group: 'Logs', anyOf: ['vne'], key: 'f', icon: '⇌' },
  {
    path: '/flows/aggregated',
    label: 'Flow conversations',
    group: 'Logs',
    anyOf: ['vne'],
    icon: '⇆',
  },
  { path: '/flows/top', label: 'Top talkers', group: 'Logs', anyOf: ['vne'], icon: '▥' },
  { path: '/tools', label: 'Tools', group: 'Tools', anyOf: ['tools'], key: 't', icon: '⚒' },
  { path: '/captures', label: 'Packet capture', group: 'Tools', anyOf: ['capture'], icon: '⊙' },
  { path: '/terminal', label: 'Terminal', group: 'Tools', anyOf: ['sa'], key: 's', icon: '›_' },
  {
    path: '/pending',
    label: 'Pending devices',
    group: 'Inventory',
    anyOf: ['write_devices'],
    key: 'p',
    icon: '⊕',
  },
  {
    path: '/credentials',
    label: 'Discovery credentials',
    group: 'Inventory',
    anyOf: ['write_devices'],
    icon: '⚷',
  },
  {
    path: '/localnets',
    label: 'Local networks',
    group: 'Inventory',
    anyOf: ['write_devices'],
    icon: '#',
  },
  { path: '/users', label: 'Users', group: 'Administration', key: 'a', icon: '☺' },
  { path: '/tokens', label: 'Access tokens', group: 'Administration', anyOf: ['api'], icon: '✦' },
  {
    path: '/oauth-clients',
    label: 'OAuth clients',
    group: 'Administration',
    anyOf: ['system'],
    icon: '⇄',
  },
  {
    path: '/maintenance/partitions',
    label: 'Partitions',
    group: 'Administration',
    anyOf: ['system'],
    icon: '◫',
  },
  { path: '/alerts', label: 'Alerts', group: 'Alerting', anyOf: ['alerts'], key: 'n', icon: '⚑' },
  {
    path: '/alerts/history',
    label: 'Alert history',
    group: 'Alerting',
    anyOf: ['alerts'],
    icon: '☰',
  },
  {
    path: '/alerts/outlets',
    label: 'Outlets and routing',
    group: 'Alerting',
    anyOf: ['alerts'],
    icon: '➚',
  },
  {
    path: '/alerts/templates',
    label: 'Alert classes and templates',
    group: 'Alerting',
    anyOf: ['alerts'],
    icon: '✉',
  },
  {
    path: '/alerts/windows',
    label: 'Maintenance windows',
    group: 'Alerting',
    anyOf: ['alerts'],
    icon: '◷',
  },
  {
    path: '/alerts/legacy',
    label: 'Legacy alerts',
    group: 'Alerting',
    anyOf: ['alerts'],
    icon: '⚐',
  },
  {
    path: '/mail-relay',
    label: 'Mail relay',
    group: 'Administration',
    anyOf: ['system'],
    icon: '✆',
  },
  {
    path: '/settings/certificate',
    label: 'Certificate',
    group: 'Administration',
    anyOf: ['sa'],
    icon: '⚿',
  },
  {
    path: '/settings/services',
    label: 'Services',
    group: 'Administration',
    anyOf: ['system'],
    icon: '⚙',
  },
  {
    path: '/settings/network',
    label: 'Network',
    group: 'Administration',
    anyOf: ['system'],
    icon: '⇋',
  },
  {
    path: '/settings/hostname',
    label: 'Hostname and host map',
    group: 'Administration',
    anyOf: ['system'],
    icon: '@',
  },
  { path: '/settings/time', label: 'Time', group: 'Administration', anyOf: ['system'], icon: '◴' },
  {
    path: '/settings/license',
    label: 'License',
    group: 'Administration',
    anyOf: ['system'],
    icon: '✓',
  },
  {
    path: '/settings/retention',
    label: 'Retention',
    group: 'Administration',
    anyOf: ['system'],
    icon: '◔',
  },
  {
    path: '/settings/daemons',
    label: 'Daemons',
    group: 'Administration',
    anyOf: ['sa'],
    icon: '☷',
  },
  { path: '/os-upgrade', label: 'OS upgrade', group: 'Administration', anyOf: ['sa'], icon: '⇪' },
  {
    path: '/directory',
    label: 'Directory',
    group: 'Administration',
    anyOf: ['sa'],
    icon: '⌘',
  },
  {
    path: '/agents',
    label: 'Agents',
    group: 'Inventory',
    anyOf: ['agentadmin', 'write_devices'],
    icon: '⚙',
  },
];

/** Pages of the desktop app (the bridge is there before the console starts). */
if (isDesktop()) {
  PAGES.push(
    { path: '/desktop/connections', label: 'Appliances', group: 'Desktop', icon: '⇆' },
    { path: '/desktop/appliance', label: "This computer's appliance", group: 'Desktop', icon: '⌂' },
    { path: '/desktop/terminals', label: 'Terminals', group: 'Desktop', icon: '⌨' },
  );
}

/**
 * Whether the navigation marks `path` active at `pathname`: the deepest of `pages` whose path the
 * location starts with (on /alerts/history, "Alert history" and not also "Alerts").
 */
export function isActivePage(
  path: string,
  pathname: string,
  pages: readonly { path: string }[],
): boolean {
  if (path === '/') return pathname === '/';
  if (!pathname.startsWith(path)) return false;
  return !pages.some(
    (q) =>
      q.path.length > path.length && q.path.startsWith(`${path}/`) && pathname.startsWith(q.path),
  );
}
