/**
 * Terminal sessions, each bridged to the console over its own MessagePort:
 * - `pty`: a local shell in a pseudo-terminal (node-pty in the main process), spoken to with
 *   PtyClientMessage / PtyServerMessage;
 * - `socket`: the appliance's terminal WebSocket, opened here through the connection's pinned
 *   agent (the certificate is enforced, no `Origin` is sent, the single-use ticket in its path is
 *   the credential) and passed through frame by frame (SocketClientMessage / SocketServerMessage).
 * Every message from the renderer is validated; a session ends when either side closes, and all
 * of them when the app quits.
 */
import crypto from 'node:crypto';
import os from 'node:os';

import type { IPty, IPtyForkOptions } from 'node-pty';
import WebSocket from 'ws';

import {
  TERMINAL_LIMITS,
  type PtyServerMessage,
  type SocketServerMessage,
  type TerminalOpened,
} from '../../electron/contract/bridge.js';
import type { ConnectionRegistry } from '../connections/connection-registry.js';
import { UserFacingError } from '../errors.js';
import { checkForwardPath } from '../proxy/path-policy.js';
import type { TerminalPort } from './terminal-port.js';

export type PtySpawner = (file: string, args: string[], options: IPtyForkOptions) => IPty;

export interface TerminalSessionsOptions {
  spawnPty: PtySpawner;
  connections: ConnectionRegistry;
  log(message: string, error?: unknown): void;
  /** The shell and its environment (tests pass /bin/sh). */
  shell?: { file: string; args: string[] };
  env?: Record<string, string | undefined>;
  maxSessions?: number;
  socketHandshakeTimeoutMs?: number;
}

export class TerminalError extends UserFacingError {
  override name = 'TerminalError';
}

interface Session {
  kind: 'pty' | 'socket';
  end(): void;
}

export class TerminalSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: TerminalSessionsOptions) {}

  get count(): number {
    return this.sessions.size;
  }

  openLocal(port: TerminalPort, size: { cols: number; rows: number }): TerminalOpened {
    this.checkCapacity();
    const sessionId = crypto.randomUUID();
    const shell = this.options.shell ?? defaultShell();
    const pty = this.options.spawnPty(shell.file, shell.args, {
      name: 'xterm-256color',
      cols: size.cols,
      rows: size.rows,
      cwd: os.homedir(),
      env: shellEnv(this.options.env ?? process.env),
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.sessions.delete(sessionId);
      try {
        pty.kill();
      } catch {
        // already gone
      }
      port.close();
    };
    this.sessions.set(sessionId, { kind: 'pty', end });

    const post = (message: PtyServerMessage) => port.postMessage(message);
    pty.onData((data) => post({ type: 'output', data }));
    pty.onExit(({ exitCode, signal }) => {
      if (ended) return;
      post({ type: 'exit', exitCode, signal: signal ? signal : null });
      end();
    });
    port.onMessage((data) => {
      const message = parsePtyClientMessage(data);
      if (!message) {
        this.options.log('terminal: a malformed message from the console was dropped');
        return;
      }
      if (message.type === 'input') pty.write(message.data);
      else if (message.type === 'resize') pty.resize(message.cols, message.rows);
      else end();
    });
    port.onClose(end);
    port.start();
    return { sessionId, kind: 'pty' };
  }

  /** Opens the appliance's terminal socket; resolves once it is open (the port then carries it). */
  async openAppliance(
    port: TerminalPort,
    input: { connectionId: string; path: string },
  ): Promise<TerminalOpened> {
    this.checkCapacity();
    const connection = this.options.connections.get(input.connectionId);
    if (!connection) throw new TerminalError('no such connection');
    if (
      !input.path.startsWith('/api/') ||
      !checkForwardPath(input.path.split('?')[0] ?? '').allowed
    ) {
      throw new TerminalError('the terminal socket path must be under /api/');
    }
    const url = new URL(input.path, connection.origin);
    url.protocol = 'wss:';
    const socket = new WebSocket(url, {
      agent: this.options.connections.agentFor(connection),
      perMessageDeflate: false,
      maxPayload: TERMINAL_LIMITS.maxFrameBytes,
      handshakeTimeout: this.options.socketHandshakeTimeoutMs ?? 15_000,
      followRedirects: false,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => {
        socket.terminate();
        reject(
          new TerminalError(`the appliance refused the terminal (HTTP ${response.statusCode})`),
        );
      });
      socket.once('error', (error) => reject(error));
    }).catch((error: unknown) => {
      port.close();
      if (error instanceof UserFacingError) throw error;
      this.options.log(`terminal: opening ${url.pathname} on ${connection.id} failed`, error);
      throw new TerminalError(
        `the appliance's terminal could not be opened: ${error instanceof Error ? error.message : String(error)}`,
      );
    });

    const sessionId = crypto.randomUUID();
    let ended = false;
    const post = (message: SocketServerMessage) => port.postMessage(message);
    const end = () => {
      if (ended) return;
      ended = true;
      this.sessions.delete(sessionId);
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) {
        socket.close(1000);
      }
      port.close();
    };
    this.sessions.set(sessionId, { kind: 'socket', end });

    socket.on('message', (data, isBinary) => {
      const frame = toFrame(data, isBinary);
      post({ type: 'message', data: frame });
    });
    socket.on('close', (code, reason) => {
      if (ended) return;
      post({ type: 'closed', code, reason: reason.toString('utf8') });
      end();
    });
    socket.on('error', (error) => this.options.log('terminal: appliance socket error', error));
    port.onMessage((data) => {
      const message = parseSocketClientMessage(data);
      if (!message) {
        this.options.log('terminal: a malformed message from the console was dropped');
        return;
      }
      if (message.type === 'send') {
        socket.send(typeof message.data === 'string' ? message.data : Buffer.from(message.data));
      } else {
        socket.close(validCloseCode(message.code), (message.reason ?? '').slice(0, 120));
      }
    });
    port.onClose(end);
    port.start();
    post({ type: 'open' });
    return { sessionId, kind: 'socket' };
  }

  closeAll(): void {
    for (const session of [...this.sessions.values()]) session.end();
  }

  private checkCapacity(): void {
    if (this.sessions.size >= (this.options.maxSessions ?? 8)) {
      throw new TerminalError('too many terminals are open; close one first');
    }
  }
}

export function parsePtyClientMessage(
  data: unknown,
):
  | { type: 'input'; data: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'close' }
  | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const message = data as Record<string, unknown>;
  switch (message.type) {
    case 'input':
      return typeof message.data === 'string' &&
        Buffer.byteLength(message.data) <= TERMINAL_LIMITS.maxFrameBytes
        ? { type: 'input', data: message.data }
        : undefined;
    case 'resize':
      return isSize(message.cols, TERMINAL_LIMITS.minCols, TERMINAL_LIMITS.maxCols) &&
        isSize(message.rows, TERMINAL_LIMITS.minRows, TERMINAL_LIMITS.maxRows)
        ? { type: 'resize', cols: message.cols, rows: message.rows }
        : undefined;
    case 'close':
      return { type: 'close' };
    default:
      return undefined;
  }
}

export function parseSocketClientMessage(
  data: unknown,
):
  | { type: 'send'; data: string | ArrayBuffer }
  | { type: 'close'; code?: number; reason?: string }
  | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const message = data as Record<string, unknown>;
  if (message.type === 'send') {
    const payload = message.data;
    if (
      typeof payload === 'string' &&
      Buffer.byteLength(payload) <= TERMINAL_LIMITS.maxFrameBytes
    ) {
      return { type: 'send', data: payload };
    }
    if (payload instanceof ArrayBuffer && payload.byteLength <= TERMINAL_LIMITS.maxFrameBytes) {
      return { type: 'send', data: payload };
    }
    return undefined;
  }
  if (message.type === 'close') {
    const code = typeof message.code === 'number' ? message.code : undefined;
    const reason = typeof message.reason === 'string' ? message.reason : undefined;
    return {
      type: 'close',
      ...(code !== undefined ? { code } : {}),
      ...(reason !== undefined ? { reason } : {}),
    };
  }
  return undefined;
}

function isSize(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function validCloseCode(code: number | undefined): number {
  return code !== undefined && (code === 1000 || (code >= 3000 && code <= 4999)) ? code : 1000;
}

function toFrame(data: WebSocket.RawData, isBinary: boolean): string | ArrayBuffer {
  const buffer = Array.isArray(data)
    ? Buffer.concat(data)
    : data instanceof ArrayBuffer
      ? Buffer.from(data)
      : data;
  if (!isBinary) return buffer.toString('utf8');
  return buffer.buffer.slice(
    buffer.byteOffset,
    buffer.byteOffset + buffer.byteLength,
  ) as ArrayBuffer;
}

function defaultShell(): { file: string; args: string[] } {
  if (process.platform === 'win32') {
    return { file: process.env.COMSPEC ?? 'powershell.exe', args: [] };
  }
  return { file: process.env.SHELL ?? '/bin/bash', args: ['-l'] };
}

function shellEnv(env: Record<string, string | undefined>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (key.startsWith('ELECTRON_') || key === 'NODE_OPTIONS' || key.startsWith('APPLIANCE_')) {
      continue;
    }
    result[key] = value;
  }
  result.TERM = 'xterm-256color';
  return result;
}
