/**
 * TCP port check: a connect with a timeout. Latency is the time to establish the connection in
 * ms, -1 when the port is closed, filtered or unreachable.
 */
import net from 'node:net';

export interface PortReading {
  latency: number;
  state: 'open' | 'closed';
  /** Why the port counts as closed (`ECONNREFUSED`, `timeout`...). */
  reason?: string;
}

export function checkPort(
  host: string,
  port: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<PortReading> {
  if (net.isIP(host) === 0)
    return Promise.resolve({ latency: -1, state: 'closed', reason: 'not an IP address' });
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const socket = net.connect({ host, port });
    let settled = false;
    const finish = (reading: PortReading) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(reading);
    };
    const onAbort = () => finish({ latency: -1, state: 'closed', reason: 'aborted' });
    const timer = setTimeout(
      () => finish({ latency: -1, state: 'closed', reason: 'timeout' }),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () =>
      finish({
        latency: Math.round(Number(process.hrtime.bigint() - started) / 1000) / 1000,
        state: 'open',
      }),
    );
    socket.once('error', (err: NodeJS.ErrnoException) =>
      finish({ latency: -1, state: 'closed', reason: err.code ?? err.message }),
    );
  });
}
