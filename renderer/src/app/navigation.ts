/** The console's pages: the navigation, the command palette and the `g <key>` shortcuts share it. */
import { isDesktop } from '../lib/bridge.js';
import type { Permission } from '../lib/caller.js';

export interface PageEntry {
  path: string;
  label: string;
  group: 'Monitor' | 'Logs' | 'Tools' | 'Inventory' | 'Administration' | 'Desktop';
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
  {
    path: '/directory',
    label: 'Directory',
    group: 'Administration',
    anyOf: ['sa'],
    icon: '⌘',
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
