// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { api, ApiError } from './api-client.js';
import { useSession } from './session.js';
import { setTransport, type Transport } from './transport.js';

interface Call {
  url: string;
  init: RequestInit;
}

function fakeTransport(
  answer: (url: string, init: RequestInit) => { status: number; body: unknown },
  holdsToken = false,
): { transport: Transport; calls: Call[] } {
  const calls: Call[] = [];
  const transport: Transport = {
    base: '',
    holdsToken,
    fetch: async (url, init) => {
      calls.push({ url, init });
      const { status, body } = answer(url, init);
      return new Response(body === undefined ? '' : JSON.stringify(body), {
        status,
        headers: { 'content-type': 'application/json' },
      });
    },
    openSocket: () => {
      throw new Error('no sockets here');
    },
  };
  return { transport, calls };
}

const headerOf = (call: Call, name: string) => new Headers(call.init.headers).get(name);

beforeEach(() => {
  sessionStorage.clear();
  useSession.getState().signIn('tok-1', { id: 1, email: 'a@x', name: 'A' });
});
afterEach(() => useSession.getState().signOut());

describe('api client', () => {
  it('sends the bearer from the session, and none when the transport holds the token', async () => {
    const browser = fakeTransport(() => ({ status: 200, body: { ok: true } }));
    setTransport(browser.transport);
    await api.get('/api/me');
    expect(headerOf(browser.calls[0]!, 'authorization')).toBe('Bearer tok-1');
    const desktop = fakeTransport(() => ({ status: 200, body: { ok: true } }), true);
    setTransport(desktop.transport);
    await api.get('/api/me');
    expect(headerOf(desktop.calls[0]!, 'authorization')).toBeNull();
  });

  it('turns an HTTP 200 hasError body into an ApiError with its message', async () => {
    setTransport(
      fakeTransport(() => ({
        status: 200,
        body: { status: false, hasError: true, message: 'Email in use' },
      })).transport,
    );
    const err = await api.post('/api/saveUser', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ kind: 'envelope', status: 200, message: 'Email in use' });
  });

  it('reads the message of each failure family', async () => {
    const cases: [number, unknown, string][] = [
      [404, { error: 'Token not found' }, 'Token not found'],
      [400, { errors: { name: ['The name is reserved.'] } }, 'The name is reserved.'],
      [
        422,
        { message: 'The email field is required.', errors: { email: ['x'] } },
        'The email field is required.',
      ],
      [400, { error: 'invalid_grant', error_description: 'Code expired' }, 'Code expired'],
      [409, { status: 409, message: 'Duplicate IP' }, 'Duplicate IP'],
      [200, { status: 'timeout', message: 'Scan took too long' }, 'Scan took too long'],
      [500, {}, 'The appliance answered HTTP 500.'],
    ];
    for (const [status, body, message] of cases) {
      setTransport(fakeTransport(() => ({ status, body })).transport);
      const err = (await api.get('/api/x').catch((e: unknown) => e)) as ApiError;
      expect(err.message, JSON.stringify(body)).toBe(message);
    }
    setTransport(
      fakeTransport(() => ({ status: 400, body: { errors: { name: ['bad'] } } })).transport,
    );
    const err = (await api.get('/api/x').catch((e: unknown) => e)) as ApiError;
    expect(err.fields).toEqual({ name: ['bad'] });
  });

  it('passes successful bodies through, including 200 with in-body status 204', async () => {
    setTransport(
      fakeTransport(() => ({ status: 200, body: { status: 204, hasError: false, message: {} } }))
        .transport,
    );
    await expect(api.post('/api/getLatencyTracker', { deviceId: 1 })).resolves.toEqual({
      status: 204,
      hasError: false,
      message: {},
    });
  });

  it('401 with a live token (GET /api/me answers 200) is a denial: the session stays', async () => {
    const { transport, calls } = fakeTransport((url) =>
      url === '/api/me'
        ? { status: 200, body: { id: 1 } }
        : {
            status: 401,
            body: {
              status: false,
              hasError: true,
              message: 'You do not have permission to perform this action.',
            },
          },
    );
    setTransport(transport);
    const err = (await api.get('/api/getUrls').catch((e: unknown) => e)) as ApiError;
    expect(err.kind).toBe('denied');
    expect(err.message).toBe('You do not have permission to perform this action.');
    expect(calls.map((c) => c.url)).toEqual(['/api/getUrls', '/api/me']);
    expect(useSession.getState().token).toBe('tok-1');
  });

  it('401 with a dead token ends the session and remembers the page', async () => {
    history.replaceState(null, '', '/devices/7?window=8h');
    setTransport(
      fakeTransport(() => ({
        status: 401,
        body: { status: false, hasError: true, message: 'Unauthenticated.' },
      })).transport,
    );
    const err = (await api.get('/api/devices').catch((e: unknown) => e)) as ApiError;
    expect(err.kind).toBe('unauthenticated');
    expect(useSession.getState().token).toBeNull();
    expect(useSession.getState().expiredAt).toBe('/devices/7?window=8h');
    expect(sessionStorage.getItem('console.session')).toBeNull();
  });

  it('reports a network failure as its own kind', async () => {
    setTransport({
      base: '',
      holdsToken: false,
      fetch: () => Promise.reject(new TypeError('Failed to fetch')),
      openSocket: () => {
        throw new Error('no');
      },
    });
    await expect(api.get('/api/me')).rejects.toMatchObject({ kind: 'network', status: 0 });
  });
});
