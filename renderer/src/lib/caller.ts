/**
 * Who is signed in and what they may do, from their own `getUsers` row (spec part 1: callers
 * without `users` get only their own row, `self_only`). The UI hides actions the caller lacks;
 * the appliance still decides, and a refusal shows its message (api-client.ts).
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, type ApiResult } from './api-client.js';
import { keys } from './query-keys.js';
import { useSession } from './session.js';

export type UsersAnswer = ApiResult<'/api/getUsers', 'get'>;
export type UserRow = UsersAnswer['users'][number];

export const PERMISSIONS = [
  'sa',
  'api',
  'users',
  'system',
  'devices',
  'write_devices',
  'overwatch',
  'alerts',
  'logs',
  'vne',
  'capture',
  'urls',
  'tools',
  'agentadmin',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function fetchUsers(): Promise<UsersAnswer> {
  return api.get<UsersAnswer>('/api/getUsers');
}

/** The caller's own getUsers answer (the router's root loader starts it with the first page). */
export const callerQuery = queryOptions({
  queryKey: keys.me.users,
  queryFn: fetchUsers,
  staleTime: 60_000,
});

export interface Caller {
  user: UserRow | null;
  loading: boolean;
  /** `sa` holds every permission. */
  can(permission: Permission): boolean;
  canAny(...permissions: Permission[]): boolean;
}

export function callerFrom(answer: UsersAnswer | undefined): UserRow | null {
  if (!answer) return null;
  return answer.users.find((u) => u.id === answer.caller_id) ?? null;
}

export function permits(user: UserRow | null, permission: Permission): boolean {
  if (!user) return false;
  return user.permissions.includes('sa') || user.permissions.includes(permission);
}

export function useCaller(): Caller {
  const token = useSession((s) => s.token);
  const query = useQuery({ ...callerQuery, enabled: token !== null });
  const user = callerFrom(query.data);
  return {
    user,
    loading: query.isPending,
    can: (permission) => permits(user, permission),
    canAny: (...permissions) => permissions.some((p) => permits(user, p)),
  };
}
