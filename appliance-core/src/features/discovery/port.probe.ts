/**
 * The portscan of a discovery sweep: a TCP connect to a short list of well-known ports of each
 * host that answered ICMP. An answered connect means open; refused, filtered or timed out means
 * not open. Sockets are destroyed on every path.
 */
import net from 'node:net';

/** SSH, telnet, HTTP, MS-RPC, NetBIOS, HTTPS, SMB, RDP, WinRM, HTTP alternates. */
export const DEFAULT_PORTSCAN_PORTS: readonly number[] = [
  22, 23, 80, 135, 139, 443, 445, 3389, 5985, 8080, 8443,
];

export function tcpOpen(
  host: string,
  port: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const socket = net.connect({ host, port });
    const done = (open: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(open);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The open ports of `host` among `ports`, ascending. */
export async function openPorts(
  host: string,
  ports: readonly number[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<number[]> {
  const results = await Promise.all(
    ports.map(async (port) => ((await tcpOpen(host, port, timeoutMs, signal)) ? port : null)),
  );
  return results.filter((p): p is number => p !== null).sort((a, b) => a - b);
}
