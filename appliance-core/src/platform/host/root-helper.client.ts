/**
 * The appliance's client of the root helper (protocol: root-helper.protocol.ts): one request per
 * connection on the helper's Unix socket, one JSON line each way.
 *
 * Invariants:
 * - A request is serialised with JSON.stringify, so no value a caller typed can put a newline
 *   into the line (JSON escapes it); a request over ROOT_HELPER_MAX_REQUEST bytes is refused
 *   before anything is sent.
 * - Every call ends within `timeoutMs` (connect, write and answer together); the socket is
 *   destroyed on every path, and an answer is read up to ROOT_HELPER_MAX_ANSWER bytes only.
 * - A helper that cannot be reached (no socket, refused, no permission, timeout) is a
 *   RootHelperUnavailableError: the caller answers its failure shape and nothing was applied. A
 *   reached helper's own refusal is an answer (`{ok: false, code, message}`), never an exception.
 */
import net from 'node:net';
import {
  ROOT_HELPER_DEFAULT_SOCKET,
  ROOT_HELPER_MAX_REQUEST,
  ROOT_HELPER_PROTOCOL_VERSION,
  type RootHelperRequest,
  type RootHelperResponse,
} from './root-helper.protocol.js';

/** Longest answer line read from the helper. */
export const ROOT_HELPER_MAX_ANSWER = 256 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

export class RootHelperUnavailableError extends Error {}

export interface RootHelperClientOptions {
  socketPath?: string;
  timeoutMs?: number;
}

export class RootHelperClient {
  readonly socketPath: string;
  private readonly timeoutMs: number;

  constructor(options: RootHelperClientOptions = {}) {
    this.socketPath = options.socketPath ?? ROOT_HELPER_DEFAULT_SOCKET;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Sends one request and resolves with the helper's answer. */
  call(request: RootHelperRequest): Promise<RootHelperResponse> {
    if (request.v !== ROOT_HELPER_PROTOCOL_VERSION)
      return Promise.reject(new Error(`root helper protocol version ${String(request.v)}`));
    const line = `${JSON.stringify(request)}\n`;
    if (Buffer.byteLength(line) > ROOT_HELPER_MAX_REQUEST)
      return Promise.reject(new Error('root helper request is too large'));
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ path: this.socketPath });
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (err: Error | null, answer?: RootHelperResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        if (err) reject(err);
        else resolve(answer as RootHelperResponse);
      };
      const timer = setTimeout(
        () =>
          finish(
            new RootHelperUnavailableError(
              `the root helper at ${this.socketPath} did not answer within ${this.timeoutMs} ms`,
            ),
          ),
        this.timeoutMs,
      );
      socket.on('connect', () => socket.write(line));
      socket.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > ROOT_HELPER_MAX_ANSWER) {
          finish(new RootHelperUnavailableError('the root helper answered too much'));
          return;
        }
        chunks.push(chunk);
        const text = Buffer.concat(chunks).toString('utf8');
        const newline = text.indexOf('\n');
        if (newline !== -1) finish(null, parseAnswer(text.slice(0, newline)));
      });
      socket.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8').trim();
        if (text === '')
          finish(new RootHelperUnavailableError('the root helper closed without an answer'));
        else finish(null, parseAnswer(text));
      });
      socket.on('error', (err: NodeJS.ErrnoException) =>
        finish(
          new RootHelperUnavailableError(
            `the root helper is not reachable at ${this.socketPath} (${err.code ?? err.message})`,
          ),
        ),
      );
    });
  }
}

/** A well-formed answer, or a `failed` answer saying the helper spoke something else. */
export function parseAnswer(line: string): RootHelperResponse {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, code: 'failed', message: 'the root helper answered something not JSON' };
  }
  if (typeof value === 'object' && value !== null) {
    const answer = value as Record<string, unknown>;
    if (answer.ok === true) return { ok: true, output: answer.output };
    if (
      answer.ok === false &&
      (answer.code === 'refused' || answer.code === 'failed' || answer.code === 'unsupported') &&
      typeof answer.message === 'string'
    )
      return { ok: false, code: answer.code, message: answer.message.slice(0, 500) };
  }
  return { ok: false, code: 'failed', message: 'the root helper answered an unknown shape' };
}
