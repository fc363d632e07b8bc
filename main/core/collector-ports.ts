/**
 * Where the embedded appliance's collectors listen. They are off until the user turns them on;
 * then they bind the address the user chose and reuse the ports they had last time when those
 * are still free, or take ephemeral ones (`auto`): never the standalone defaults (syslog 5514,
 * NetFlow 2055), so the desktop app never takes them from a headless appliance on the same host.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import os from 'node:os';

import type { CollectorPorts, CollectorSettings } from '../../electron/contract/bridge.js';

export const STANDALONE_DEFAULT_PORTS = { syslog: 5514, netflow: 2055 } as const;

export const DEFAULT_COLLECTOR_SETTINGS: CollectorSettings = {
  enabled: false,
  bindAddress: '127.0.0.1',
};

export type PortSetting = number | 'auto';

export interface CollectorPortChoice {
  syslog: PortSetting;
  netflow: PortSetting;
}

export type PortProbe = (
  protocol: 'udp' | 'tcp',
  address: string,
  port: number,
) => Promise<boolean>;

/** Last time's ports when still free on this address, else `auto`; never a standalone default. */
export async function chooseCollectorPorts(
  bindAddress: string,
  lastPorts: CollectorPorts,
  isFree: PortProbe = isPortFree,
): Promise<CollectorPortChoice> {
  const syslog = lastPorts.syslog?.udp;
  const netflow = lastPorts.netflow?.udp;
  return {
    // Syslog listens on UDP and TCP with one number.
    syslog:
      syslog !== undefined &&
      syslog !== STANDALONE_DEFAULT_PORTS.syslog &&
      (await isFree('udp', bindAddress, syslog)) &&
      (await isFree('tcp', bindAddress, syslog))
        ? syslog
        : 'auto',
    netflow:
      netflow !== undefined &&
      netflow !== STANDALONE_DEFAULT_PORTS.netflow &&
      (await isFree('udp', bindAddress, netflow))
        ? netflow
        : 'auto',
  };
}

export const isPortFree: PortProbe = (protocol, address, port) =>
  new Promise((resolve) => {
    if (protocol === 'udp') {
      const socket = dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
      socket.once('error', () => {
        socket.close();
        resolve(false);
      });
      socket.bind({ address, port, exclusive: true }, () => socket.close(() => resolve(true)));
      return;
    }
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: address, port, exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });

/** The addresses the collectors may bind: every local interface address, and all of them. */
export function localAddresses(
  interfaces: ReturnType<typeof os.networkInterfaces> = os.networkInterfaces(),
): string[] {
  const addresses = new Set<string>(['127.0.0.1']);
  for (const entries of Object.values(interfaces)) {
    for (const entry of entries ?? []) {
      // Link-local IPv6 needs a zone id the appliance's bind setting does not take.
      if (entry.family === 'IPv6' && entry.address.toLowerCase().startsWith('fe80:')) continue;
      addresses.add(entry.address);
    }
  }
  addresses.add('0.0.0.0');
  addresses.add('::');
  return [...addresses];
}

/** The collector settings in the appliance's environment (see appliance-core's configuration). */
export function collectorEnv(
  settings: CollectorSettings,
  choice: CollectorPortChoice,
): Record<string, string> {
  if (!settings.enabled) return { APPLIANCE_SYSLOG_PORT: '0', APPLIANCE_NETFLOW_PORT: '0' };
  return {
    APPLIANCE_COLLECTOR_BIND: settings.bindAddress,
    APPLIANCE_SYSLOG_PORT: String(choice.syslog),
    APPLIANCE_NETFLOW_PORT: String(choice.netflow),
  };
}
