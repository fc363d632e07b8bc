/**
 * The interfaces a capture may open, and the default when a request names none.
 *
 * Capturable: the network interfaces of the appliance's network namespace (/proc/net/dev:
 * /sys/class/net shows the host's when the process runs under `unshare -n` or systemd's
 * PrivateNetwork) plus `any` (libpcap's pseudo interface for all of them).
 *
 * Default: the interfaces marked `use_sniffer` in the network configuration, through the
 * `sniffInterfaces` provider the composition root injects (the settings feature's stored roles);
 * when none is marked, the interface of the IPv4 default route (/proc/net/route), else `any`.
 */
import fs from 'node:fs';
import { IFACE_NAME } from './capture-filter.rules.js';

export type SniffInterfacesProvider = () => readonly string[];

/**
 * The interface names of this process's network namespace, from `/proc/net/dev` (two header
 * lines, then `name: counters`), or null when the file cannot be read.
 */
export function namespaceInterfaces(netDev = '/proc/net/dev'): string[] | null {
  let text: string;
  try {
    text = fs.readFileSync(netDev, 'utf8');
  } catch {
    return null;
  }
  return text
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]!.trim())
    .filter(Boolean);
}

/** No interface marked (the default when no provider is injected, as in the feature's tests). */
export const noSniffInterfaces: SniffInterfacesProvider = () => [];

export class CaptureInterfaces {
  constructor(
    private readonly sniff: SniffInterfacesProvider = noSniffInterfaces,
    private readonly netDev = '/proc/net/dev',
    private readonly routeFile = '/proc/net/route',
  ) {}

  list(): string[] {
    const names = (namespaceInterfaces(this.netDev) ?? []).filter((n) => IFACE_NAME.test(n));
    return [...names.sort(), 'any'];
  }

  defaults(): string[] {
    const known = new Set(this.list());
    const marked = this.sniff().filter((n) => known.has(n));
    if (marked.length > 0) return [...new Set(marked)];
    const route = this.defaultRouteInterface();
    return route && known.has(route) ? [route] : ['any'];
  }

  /** The interface of the IPv4 default route (destination 00000000), or null. */
  defaultRouteInterface(): string | null {
    let text: string;
    try {
      text = fs.readFileSync(this.routeFile, 'utf8');
    } catch {
      return null;
    }
    for (const line of text.split('\n').slice(1)) {
      const [iface, destination, , , , , , mask] = line.trim().split(/\s+/);
      if (iface && destination === '00000000' && mask === '00000000') return iface;
    }
    return null;
  }
}
