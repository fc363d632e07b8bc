/** The query client: cached server state (react-query holds all of it). */
import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api-error.js';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 15_000,
        gcTime: 10 * 60_000,
        refetchOnWindowFocus: false,
        // A refusal or a bad request will not get better by asking again.
        retry: (count, error) =>
          !(error instanceof ApiError && error.kind !== 'network' && error.status < 500) &&
          count < 2,
      },
      mutations: { retry: false },
    },
  });
}

const clients = new Map<string, QueryClient>();

/**
 * One cache per appliance connection (desktop app; `browser` in a browser): switching connection
 * switches cache, switching back finds the first one as it was, and a mutation's invalidation
 * can never reach another appliance's data. A removed connection's cache is dropped.
 */
export function queryClientFor(scope: string): QueryClient {
  let client = clients.get(scope);
  if (!client) {
    client = createQueryClient();
    clients.set(scope, client);
  }
  return client;
}

export function dropQueryClient(scope: string): void {
  clients.get(scope)?.clear();
  clients.delete(scope);
}
