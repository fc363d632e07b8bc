// @vitest-environment happy-dom
// The desktop transport: requests go to the per-connection base with no token and no cookie;
// proxy refusals are reported; the appliance terminal is asked of the bridge and its port
// matched by session id; ports posted by anything but the window itself are ignored.
import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  CONSOLE_EVENTS,
  PROXY_ERROR_HEADER,
  type ConsoleBridge,
} from '../../../electron/contract/bridge.js';
import { authHeaders, buildUrl } from './api-client.js';
import { connectionBasePath, desktopTransport } from './desktop-transport.js';
import { desktopSessionMarker, useSession } from './session.js';
import { TerminalPortInbox } from './terminal-ports.js';
import { setTransport } from './transport.js';

afterEach(() => {
  vi.unstubAllGlobals();
  useSession.getState().signOut();
});

function bridgeWith(openAppliance: ConsoleBridge['terminal']['openAppliance']): ConsoleBridge {
  return { terminal: { openAppliance } } as unknown as ConsoleBridge;
}

describe('desktop transport', () => {
  it('sends every call under /appliances/<id> with no Authorization and no cookies', async () => {
    const seen: Array<{ url: string; init: RequestInit }> = [];
    vi.stubGlobal('fetch', (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return Promise.resolve(
        new Response('{}', { headers: { 'content-type': 'application/json' } }),
      );
    });
    const transport = desktopTransport({
      bridge: bridgeWith(() => Promise.reject(new Error('unused'))),
      connectionId: 'c-0123456789ab',
    });
    setTransport(transport);
    useSession.getState().signInDesktop('c-0123456789ab', null);
    expect(useSession.getState().token).toBe(desktopSessionMarker('c-0123456789ab'));
    expect(buildUrl('/api/devices', { search: 'a b' })).toBe(
      '/appliances/c-0123456789ab/api/devices?search=a+b',
    );
    expect(authHeaders()).toEqual({});
    await transport.fetch(buildUrl('/api/me'), { method: 'GET', headers: authHeaders() });
    expect(seen[0]).toMatchObject({
      url: '/appliances/c-0123456789ab/api/me',
      init: { credentials: 'omit', headers: {} },
    });
    expect(() => connectionBasePath('../x')).toThrow();
  });

  it('reports a changed certificate with both fingerprints', async () => {
    const body = {
      error: 'the certificate changed',
      proxy: { code: 'certificate-changed', pinnedSha256: 'AA:01', presentedSha256: 'BB:02' },
    };
    vi.stubGlobal('fetch', () =>
      Promise.resolve(
        new Response(JSON.stringify(body), {
          status: 502,
          headers: {
            'content-type': 'application/json',
            [PROXY_ERROR_HEADER]: 'certificate-changed',
          },
        }),
      ),
    );
    const problems: unknown[] = [];
    const transport = desktopTransport({
      bridge: bridgeWith(() => Promise.reject(new Error('unused'))),
      connectionId: 'embedded',
      onProxyError: (p) => problems.push(p),
    });
    const answer = await transport.fetch('/appliances/embedded/api/me', { method: 'GET' });
    expect(answer.status).toBe(502);
    expect(await answer.json()).toEqual(body);
    expect(problems).toEqual([
      {
        connectionId: 'embedded',
        code: 'certificate-changed',
        message: 'the certificate changed',
        pinnedSha256: 'AA:01',
        presentedSha256: 'BB:02',
      },
    ]);
  });

  it('opens the appliance terminal through the bridge and takes its port by session id', async () => {
    const inbox = new TerminalPortInbox(window);
    const channel = new MessageChannel();
    const decoy = new MessageChannel();
    const calls: unknown[] = [];
    const transport = desktopTransport({
      bridge: bridgeWith((input) => {
        calls.push(input);
        // As the preload does: the port first, as a message of the page's own window. A port
        // from anything else (a frame, another window) is ignored.
        const message = (source: unknown, port: MessagePort) =>
          new MessageEvent('message', {
            data: { type: CONSOLE_EVENTS.terminalPort, sessionId: 's-1' },
            origin: window.location.origin,
            source: source as Window,
            ports: [port],
          });
        window.dispatchEvent(message({}, decoy.port2));
        window.dispatchEvent(message(window, channel.port2));
        return Promise.resolve({ ok: true, value: { sessionId: 's-1', kind: 'socket' } });
      }),
      connectionId: 'embedded',
      ports: inbox,
    });
    const socket = transport.openSocket('/api/terminal/socket?ticket=t');
    const opened = new Promise<void>((resolve) => (socket.onopen = () => resolve()));
    expect(calls).toEqual([{ connectionId: 'embedded', path: '/api/terminal/socket?ticket=t' }]);
    channel.port1.postMessage({ type: 'open' });
    await opened;
    expect(socket.readyState).toBe(1);
    socket.close();
    inbox.dispose();
    channel.port1.close();
    decoy.port1.close();
  });

  it("a refused opening fails the socket with main's message", async () => {
    const transport = desktopTransport({
      bridge: bridgeWith(() =>
        Promise.resolve({ ok: false, error: { message: 'too many terminals are open' } }),
      ),
      connectionId: 'embedded',
      ports: new TerminalPortInbox(window),
    });
    const socket = transport.openSocket('/api/terminal/socket?ticket=t');
    const reason = await new Promise<string>(
      (resolve) => (socket.onclose = (e) => resolve(e.reason)),
    );
    expect(reason).toBe('too many terminals are open');
  });
});
