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
