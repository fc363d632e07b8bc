/**
 * Binding the collectors' sockets (syslog on UDP and TCP, NetFlow/IPFIX on UDP) and reporting
 * the ports they got.
 *
 * - A port of 0 disables the collector; `auto` binds an ephemeral port (tests, the desktop's
 *   embedded appliance). A fixed port that is taken is an error naming the port, never a silent
 *   fallback to another one.
 * - Syslog listens on UDP and TCP under one number: UDP binds first, TCP takes the number UDP
 *   got. With `auto`, when TCP finds that number taken, both are released and the pair is tried
 *   again on a new ephemeral port (at most PAIR_ATTEMPTS times).
 * - What collectors bound is recorded in one CollectorPorts report, printed after the ready line
 *   and posted in the ready message (server.ts), so a parent process learns the ports of an
 *   `auto` start without parsing logs.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import type { CollectorPortSetting } from '../config/config.js';

export const PAIR_ATTEMPTS = 8;

export interface BoundPorts {
  udp?: number;
  tcp?: number;
}

/** The ports each collector bound, by collector name (`syslog`, `netflow`). */
export class CollectorPorts {
  private readonly bound = new Map<string, BoundPorts>();

  set(collector: string, ports: BoundPorts): void {
    this.bound.set(collector, { ...ports });
  }

  delete(collector: string): void {
    this.bound.delete(collector);
  }

  /** A plain object (JSON and structured-clone safe), collectors in name order. */
  report(): Record<string, BoundPorts> {
    return Object.fromEntries([...this.bound.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}

export class CollectorBindError extends Error {}

const udpType = (host: string): dgram.SocketType => (net.isIPv6(host) ? 'udp6' : 'udp4');

function describe(err: unknown, proto: string, host: string, port: number): CollectorBindError {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${proto} ${host}:${port}`;
  if (code === 'EADDRINUSE') return new CollectorBindError(`${where} is already in use`);
  if (code === 'EACCES') return new CollectorBindError(`no permission to listen on ${where}`);
  if (code === 'EADDRNOTAVAIL')
    return new CollectorBindError(`${host} is not an address of this host (${proto} ${port})`);
  return new CollectorBindError(`cannot listen on ${where}: ${(err as Error).message}`);
}

/** Binds a UDP socket; `port` 0 means an ephemeral one. Rejects with a CollectorBindError. */
export function bindUdp(
  host: string,
  port: number,
  options: { receiveBufferSize?: number } = {},
): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({ type: udpType(host), reuseAddr: false });
    const onError = (err: Error) => {
      socket.close();
      reject(describe(err, 'UDP', host, port));
    };
    socket.once('error', onError);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', onError);
      if (options.receiveBufferSize) {
        try {
          socket.setRecvBufferSize(options.receiveBufferSize);
        } catch {
          // The kernel caps the buffer (net.core.rmem_max); the default still works.
        }
      }
      resolve(socket);
    });
  });
}

/** Binds a listening TCP server; `port` 0 means an ephemeral one. Rejects with a CollectorBindError. */
export function bindTcp(
  host: string,
  port: number,
  onConnection: (socket: net.Socket) => void = (s) => s.destroy(),
): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer(onConnection);
    const onError = (err: Error) => {
      server.close();
      reject(
        Object.assign(describe(err, 'TCP', host, port), {
          code: (err as NodeJS.ErrnoException).code,
        }),
      );
    };
    server.once('error', onError);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

export const udpPortOf = (socket: dgram.Socket): number => socket.address().port;
export const tcpPortOf = (server: net.Server): number => (server.address() as net.AddressInfo).port;

const closeUdp = (socket: dgram.Socket) => new Promise<void>((r) => socket.close(() => r()));
const closeTcp = (server: net.Server) => new Promise<void>((r) => server.close(() => r()));

/** Null when the setting disables the collector (0); else the port to bind (0 = ephemeral). */
export function portToBind(setting: CollectorPortSetting): number | null {
  if (setting === 'auto') return 0;
  return setting === 0 ? null : setting;
}

/**
 * A collector's port setting with its daemon variable applied (features/maintenance daemon
 * catalogue: `port`, digits from 0 to 65535, 0 disabling the collector): the variable when it
 * is set to a port number, the configuration's setting (env or CLI) when it is left out or empty.
 */
export function portSettingOf(
  variable: string | undefined,
  configured: CollectorPortSetting,
): CollectorPortSetting {
  if (variable === undefined || !/^(?:0|[1-9][0-9]{0,4})$/.test(variable)) return configured;
  const port = Number(variable);
  return port <= 65535 ? port : configured;
}

/**
 * Binds UDP and TCP on one port number (syslog). `auto` retries the pair on a new ephemeral
 * port when TCP finds UDP's number taken; a fixed port that is taken on either protocol fails.
 */
export async function bindUdpTcpPair(
  host: string,
  setting: Exclude<CollectorPortSetting, 0>,
  onConnection?: (socket: net.Socket) => void,
  options: {
    receiveBufferSize?: number;
    /** Tests: the UDP port an `auto` attempt asks for. */ autoPort?: (attempt: number) => number;
  } = {},
): Promise<{ udp: dgram.Socket; tcp: net.Server; port: number }> {
  const fixed = setting === 'auto' ? null : setting;
  for (let attempt = 1; ; attempt++) {
    const udp = await bindUdp(host, fixed ?? options.autoPort?.(attempt) ?? 0, options);
    const port = udpPortOf(udp);
    try {
      const tcp = await bindTcp(host, port, onConnection);
      return { udp, tcp, port };
    } catch (err) {
      await closeUdp(udp);
      const taken = (err as { code?: string }).code === 'EADDRINUSE';
      if (fixed !== null || !taken || attempt >= PAIR_ATTEMPTS) {
        if (fixed === null && taken)
          throw new CollectorBindError(
            `no free port for UDP and TCP together on ${host} after ${PAIR_ATTEMPTS} attempts`,
          );
        throw err;
      }
    }
  }
}

export { closeTcp, closeUdp };
