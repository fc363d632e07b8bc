/**
 * How the upgrader feature reaches the host: the root helper's Unix socket (one JSON line each
 * way, platform/host/root-helper.protocol.ts). A small local client kept inside this feature; the
 * settings feature has its own (platform/host/root-helper.client.ts) and the two are meant to be
 * one. Injected into the service, so tests put a fake helper on a temp socket.
 */
import net from 'node:net';
import {
  ROOT_HELPER_MAX_REQUEST,
  type RootHelperRequest,
  type RootHelperResponse,
} from '../../platform/host/root-helper.protocol.js';

/** The helper is not there (no socket, nobody listening, no permission): this host lacks the mechanism. */
export class HelperUnreachable extends Error {}

export interface UpgraderHost {
  ask(request: RootHelperRequest, timeoutMs: number): Promise<RootHelperResponse>;
}

const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'EACCES', 'ENOTSOCK', 'EPERM']);

function isResponse(value: unknown): value is RootHelperResponse {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.ok === true) return true;
  return (
    v.ok === false &&
    ['refused', 'failed', 'unsupported'].includes(v.code as string) &&
    typeof v.message === 'string'
  );
}

/** The root helper on `socketPath`. A request that gets no answer within timeoutMs fails. */
export function socketUpgraderHost(socketPath: string): UpgraderHost {
  return {
    ask: (request, timeoutMs) =>
      new Promise<RootHelperResponse>((resolve, reject) => {
        const socket = net.createConnection(socketPath);
        let text = '';
        let done = false;
        const finish = (err: Error | null, answer?: RootHelperResponse) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          socket.destroy();
          if (err) reject(err);
          else resolve(answer as RootHelperResponse);
        };
        const timer = setTimeout(
          () => finish(new Error('the root helper did not answer in time')),
          timeoutMs,
        );
        socket.setEncoding('utf8');
        socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
        socket.on('data', (chunk: string) => {
          text += chunk;
          if (text.length > ROOT_HELPER_MAX_REQUEST)
            return finish(new Error('the root helper answered too much'));
          const newline = text.indexOf('\n');
          if (newline === -1) return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(text.slice(0, newline));
          } catch {
            return finish(new Error('the root helper answered something that is not JSON'));
          }
          if (!isResponse(parsed))
            return finish(new Error('the root helper answered outside its protocol'));
          finish(null, parsed);
        });
        socket.on('end', () => finish(new Error('the root helper closed without answering')));
        socket.on('error', (err: NodeJS.ErrnoException) =>
          finish(
            UNREACHABLE.has(err.code ?? '')
              ? new HelperUnreachable(`the root helper is not reachable (${err.code})`)
              : err,
          ),
        );
      }),
  };
}
