/**
 * The desktop app's main process for the console in Chromium, minus Electron:
 * - an HTTP server on loopback plays the `app://console` scheme: each request is handed, as the
 *   Fetch Request protocol.handle would pass (`app://console/<path>`), to the real protocol
 *   handler (main/protocol/console-protocol.ts) with the console's CSP, the built console
 *   (renderer/dist) and the real appliance proxy (main/proxy) of a DesktopStack, and the answer
 *   is streamed back chunk by chunk;
 * - the bridge double's calls (desktop-bridge-double.ts) reach the real IPC handlers of main/ipc,
 *   registered as main/index.ts registers them, each called with an event from the console's
 *   frame (the sender check runs);
 * - main's events (core status, connections, sign-in) are emitted to the page;
 * - terminal sessions (main/terminal, a real node-pty shell and the appliance's socket) get a
 *   port whose page end is a real MessagePort posted to the window, relayed to here.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';
import { spawn as spawnPty } from 'node-pty';
import type { BrowserContext, Page } from 'playwright-core';

import {
  CONSOLE_CHANNELS,
  CONSOLE_EVENTS,
  CONSOLE_ORIGIN,
  EMBEDDED_CONNECTION_ID,
  type ConsoleBootstrap,
  type IpcResult,
} from '../../electron/contract/bridge.js';
import { registerAppIpc } from '../../main/ipc/app.ipc.js';
import { registerAuthIpc } from '../../main/ipc/auth.ipc.js';
import { registerConnectionsIpc } from '../../main/ipc/connections.ipc.js';
import { registerCoreIpc } from '../../main/ipc/core.ipc.js';
import type { IpcContext } from '../../main/ipc/register.js';
import { registerShellIpc } from '../../main/ipc/shell.ipc.js';
import { registerTerminalIpc } from '../../main/ipc/terminal.ipc.js';
import { CONSOLE_PAGE_POLICY } from '../../main/protocol/console-csp.js';
import { createConsoleProtocolHandler } from '../../main/protocol/console-protocol.js';
import type { TerminalPort } from '../../main/terminal/terminal-port.js';
import { TerminalSessions } from '../../main/terminal/terminal-sessions.js';
import type { DesktopStack } from '../harness/desktop-stack.js';
import { eventFrom, fakeIpcMain } from '../harness/fake-ipc.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The double as one script for addInitScript, built from the typed module. */
export async function bridgeDoubleScript(): Promise<string> {
  const result = await build({
    stdin: {
      contents:
        "import { installBridgeDouble } from './desktop-bridge-double.ts';\n" +
        'installBridgeDouble(window as never);\n',
      resolveDir: path.join(root, 'test/e2e'),
      loader: 'ts',
      sourcefile: 'bridge-double-entry.ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export interface DesktopHostCall {
  channel: string;
  input: unknown;
  at: number;
}

export interface DesktopHost {
  /** The console's origin as the page sees it (playing `app://console`). */
  url: string;
  /** Every IPC call the page made, in order. */
  calls: DesktopHostCall[];
  /** URLs the page asked the system browser to open. */
  opened: string[];
  /** Requests the protocol handler answered, as `METHOD app://console/path`. */
  served: string[];
  /** Scripted answers for a channel (what main would answer), instead of the real handler. */
  override(channel: string, answer: (input: unknown) => Promise<IpcResult<unknown>>): void;
  clearOverrides(): void;
  /** Installs the bridge double and its bindings in a browser context (before any page loads). */
  attach(context: BrowserContext): Promise<void>;
  close(): Promise<void>;
}

export async function startDesktopHost(
  stack: DesktopStack,
  options: { bootstrap?: Partial<ConsoleBootstrap> } = {},
): Promise<DesktopHost> {
  const rendererRoot = path.join(root, 'renderer/dist');
  if (!fs.existsSync(path.join(rendererRoot, 'index.html'))) {
    throw new Error('renderer/dist is missing: run npm run build first');
  }
  const handler = createConsoleProtocolHandler({
    rendererRoot,
    ...CONSOLE_PAGE_POLICY,
    proxy: stack.proxy,
  });
  const served: string[] = [];
  const server = http.createServer((req, res) => {
    void serve(req, res).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    const url = `${CONSOLE_ORIGIN}${req.url ?? '/'}`;
    served.push(`${method} ${url}`);
    const request = new Request(url, {
      method,
      headers,
      signal: abort.signal,
      ...(hasBody
        ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' }
        : {}),
    });
    const answer = await handler(request);
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      out[name] = value;
    });
    res.writeHead(answer.status, out);
    res.flushHeaders();
    if (!answer.body) {
      res.end();
      return;
    }
    const reader = answer.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Each chunk as it arrives: event streams reach the page frame by frame.
      res.write(value);
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const pages = new Set<Page>();
  const emit = (channel: string, payload: unknown) => {
    for (const page of pages) {
      void page
        .evaluate(
          ([c, p]) =>
            (
              globalThis as unknown as { __bridgeDouble?: { emit(c: string, p: unknown): void } }
            ).__bridgeDouble?.emit(c, p),
          [channel, payload] as const,
        )
        .catch(() => undefined);
    }
  };

  // Main's events, as main/index.ts sends them.
  const authChanges = stack.authChanges;
  const pushAuth = authChanges.push.bind(authChanges);
  authChanges.push = (...items) => {
    for (const item of items) emit(CONSOLE_EVENTS.authChanged, item);
    return pushAuth(...items);
  };
  const statuses = stack.statuses;
  const pushStatus = statuses.push.bind(statuses);
  statuses.push = (...items) => {
    for (const item of items) emit(CONSOLE_EVENTS.coreChanged, item);
    return pushStatus(...items);
  };
  stack.store.onChange(() =>
    emit(
      CONSOLE_EVENTS.connectionsChanged,
      stack.registry.summaries((id) => stack.sessions.status(id)),
    ),
  );

  // Terminal channels: main's end here, the page's end a real MessagePort in the page.
  let nextChannel = 0;
  const relays = new Map<string, { listeners: Array<(data: unknown) => void> }>();
  const openChannel = (page: Page) => {
    const channelId = `ch-${++nextChannel}`;
    const relay = { listeners: [] as Array<(data: unknown) => void> };
    relays.set(channelId, relay);
    const queued: unknown[] = [];
    let delivered: Promise<void> | null = null;
    let sending: Promise<unknown> = Promise.resolve();
    const call = (fn: string, ...args: unknown[]) => {
      sending = sending.then(() =>
        page
          .evaluate(
            ([f, a]) => {
              const control = (globalThis as any).__bridgeDouble;
              control?.[f](...a);
            },
            [fn, args] as const,
          )
          .catch(() => undefined),
      );
      return sending;
    };
    const port: TerminalPort = {
      postMessage(message) {
        if (!delivered) queued.push(message);
        else void call('postToPort', channelId, message);
      },
      onMessage(listener) {
        relay.listeners.push(listener);
      },
      onClose() {
        // The page closes its end with a `close` message first (lib/port-socket.ts).
      },
      start() {},
      close() {
        void call('closePort', channelId);
        relays.delete(channelId);
      },
    };
    return {
      port,
      deliver(sessionId: string) {
        delivered = call('deliverPort', channelId, sessionId).then(() => undefined);
        for (const message of queued.splice(0)) void call('postToPort', channelId, message);
      },
    };
  };

  const calls: DesktopHostCall[] = [];
  const opened: string[] = [];
  const overrides = new Map<string, (input: unknown) => Promise<IpcResult<unknown>>>();
  const ipc = fakeIpcMain();
  const log = (message: string, error?: unknown) =>
    stack.logged.push(error instanceof Error ? `${message}: ${error.message}` : message);
  const context: IpcContext = { ipc, log };
  const terminals = new TerminalSessions({ spawnPty, connections: stack.registry, log });
  const bootstrap = (): ConsoleBootstrap => ({
    version: '0.0.0-test',
    consoleOrigin: CONSOLE_ORIGIN,
    embeddedConnectionId: EMBEDDED_CONNECTION_ID,
    platform: 'linux',
    tokenStorage: stack.vault.storage,
    storageWarning: stack.vault.warning,
    ...options.bootstrap,
  });
  registerAppIpc(context, { bootstrap });
  registerConnectionsIpc(context, { registry: stack.registry, sessions: stack.sessions });
  registerAuthIpc(context, stack.sessions);
  registerCoreIpc(context, stack.embedded);
  const pageOfEvent = new WeakMap<object, Page>();
  registerTerminalIpc(context, {
    sessions: terminals,
    openChannel: (event) => {
      const page = pageOfEvent.get(event as object);
      if (!page) throw new Error('no page for this event');
      return openChannel(page);
    },
  });
  registerShellIpc(context, {
    allowedOrigins: () => stack.store.list().map((connection) => connection.origin),
    openExternal: (target) => {
      opened.push(target);
      return Promise.resolve();
    },
  });

  return {
    url,
    calls,
    opened,
    served,
    override: (channel, answer) => overrides.set(channel, answer),
    clearOverrides: () => overrides.clear(),
    async attach(browserContext) {
      await browserContext.exposeBinding(
        '__consoleBridgeInvoke',
        async ({ page }, channel: string, input: unknown) => {
          calls.push({ channel, input, at: Date.now() });
          pages.add(page);
          const scripted = overrides.get(channel);
          if (scripted) return scripted(input);
          if (!Object.values(CONSOLE_CHANNELS).includes(channel as never)) {
            return { ok: false, error: { message: `unknown channel ${channel}` } };
          }
          // An IPC event from the console's top frame, as Electron builds it.
          const event = eventFrom(`${CONSOLE_ORIGIN}/`);
          pageOfEvent.set(event, page);
          const args = input === null ? [] : [input];
          return ipc.get(channel)(event, ...args);
        },
      );
      await browserContext.exposeBinding(
        '__consoleBridgeRelay',
        (_source, channelId: string, data: unknown) => {
          for (const listener of relays.get(channelId)?.listeners ?? []) listener(data);
        },
      );
      await browserContext.addInitScript({ content: await bridgeDoubleScript() });
    },
    async close() {
      terminals.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
