/**
 * What the console's component tests share (never imported by the console itself): a fake
 * appliance behind the transport, which records every call and answers `/api/getUsers` with one
 * caller of the given permissions and everything else through `answer`, and a render wrapper with
 * the providers a page needs (react-query without retries, Mantine, a memory router).
 */
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { MemoryRouter } from 'react-router';

import { useSession } from '../lib/session.js';
import { setTransport } from '../lib/transport.js';

export interface Call {
  method: string;
  url: string;
  body: unknown;
}
export type Answer = { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;

/**
 * Signs a caller in and puts the fake appliance behind the transport (call it in beforeEach).
 * `permissions` and `answer` are read at each call, so a test may change what they return.
 * Returns the list the calls are recorded in.
 */
export function installFakeAppliance(handlers: {
  permissions: () => string[];
  answer: (call: Call) => Answer;
}): Call[] {
  const calls: Call[] = [];
  sessionStorage.clear();
  useSession.getState().signIn('tok-1', { id: 1, email: 'a@x', name: 'A' });
  setTransport({
    base: '',
    holdsToken: false,
    fetch: async (url, init) => {
      const call = {
        method: String(init?.method ?? 'GET'),
        url: String(url),
        body: typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
      };
      calls.push(call);
      if (call.url.startsWith('/api/getUsers'))
        return Response.json({
          caller_id: 1,
          users: [{ id: 1, permissions: handlers.permissions(), tags: [] }],
        });
      const a = await handlers.answer(call);
      return new Response(JSON.stringify(a.body), {
        status: a.status,
        headers: { 'content-type': 'application/json' },
      });
    },
    openSocket: () => {
      throw new Error('no sockets here');
    },
  });
  return calls;
}

/** Renders `node` inside the console's providers (a fresh query client unless one is given). */
export function renderInConsole(
  node: ReactNode,
  options: { client?: QueryClient; path?: string } = {},
) {
  const client =
    options.client ?? new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MantineProvider>
        <MemoryRouter initialEntries={[options.path ?? '/']}>{node}</MemoryRouter>
      </MantineProvider>
    </QueryClientProvider>,
  );
}
