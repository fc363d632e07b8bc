/**
 * The directory (LDAP) endpoints (spec part 1, Directory (LDAP) integration; permission `sa`).
 * Answers are `{status, hasError, ...}`; the client throws on `hasError`. Query keys: `directory`.
 */
import { queryOptions } from '@tanstack/react-query';

import { api } from '../../lib/api-client.js';

export interface DirectoryConfig {
  enabled: boolean;
  host: string;
  port: number;
  use_ssl: boolean;
  use_tls: boolean;
  verify_tls: boolean;
  base_dn: string;
  bind_dn: string;
  search_filter: string;
  username_attribute: string;
  email_attribute: string;
  first_name_attribute: string;
  last_name_attribute: string;
  directory_type: 'active_directory' | 'openldap';
  timeout: number;
  fallback_to_local: boolean;
  auto_provision: boolean;
  expand_nested_groups: boolean;
}

/** What the form sends: the configuration plus the bind password when one was typed. */
export type DirectoryConfigInput = DirectoryConfig & { bind_password?: string };

export interface Mapping {
  id: number;
  ldap_group_dn: string;
  ldap_group_name: string;
  permission_id: number;
  permission_name: string;
  permission_slug: string;
}

export interface GroupTag {
  ldap_group_dn: string;
  tag_id: number;
  slug: string;
  name: string;
}

export interface TestAnswer {
  message: string;
  groups_found: number;
  groups: string[];
}

export interface SyncAnswer {
  message: string;
  synced: number;
  errors: number;
}

export const EMPTY_CONFIG: DirectoryConfig = {
  enabled: false,
  host: '',
  port: 636,
  use_ssl: true,
  use_tls: false,
  verify_tls: true,
  base_dn: '',
  bind_dn: '',
  search_filter: '',
  username_attribute: '',
  email_attribute: '',
  first_name_attribute: '',
  last_name_attribute: '',
  directory_type: 'openldap',
  timeout: 5,
  fallback_to_local: true,
  auto_provision: false,
  expand_nested_groups: false,
};

export const directoryKeys = {
  all: ['directory'] as const,
  config: ['directory', 'config'] as const,
  mappings: ['directory', 'mappings'] as const,
  groupTags: ['directory', 'group-tags'] as const,
  permissions: ['directory', 'permissions'] as const,
};

export const configQuery = queryOptions({
  queryKey: directoryKeys.config,
  queryFn: () => api.get<{ config: DirectoryConfig | null }>('/api/ldap/config'),
  select: (a) => a.config,
});

export const mappingsQuery = queryOptions({
  queryKey: directoryKeys.mappings,
  queryFn: () => api.get<{ mappings: Mapping[] }>('/api/ldap/mappings'),
  select: (a) => a.mappings,
});

export const groupTagsQuery = queryOptions({
  queryKey: directoryKeys.groupTags,
  queryFn: () => api.get<{ tags: GroupTag[] }>('/api/ldap/group-tags'),
  select: (a) => a.tags,
});

export const permissionsQuery = queryOptions({
  queryKey: directoryKeys.permissions,
  queryFn: () =>
    api.get<{ permissions: { id: number; slug: string; name: string }[] }>('/api/getPermissions'),
  select: (a) => a.permissions,
  staleTime: 300_000,
});

/** Drops an empty bind password, so that saving keeps the stored one. */
function withoutEmptyPassword(input: DirectoryConfigInput): DirectoryConfigInput {
  const { bind_password, ...rest } = input;
  return bind_password ? { ...rest, bind_password } : rest;
}

export const saveConfig = (input: DirectoryConfigInput) =>
  api.post<{ message: string }>('/api/ldap/config', withoutEmptyPassword(input));

export const testConfig = (input: DirectoryConfigInput) =>
  api.post<TestAnswer>('/api/ldap/test', withoutEmptyPassword(input));

export const searchGroups = (search: string) =>
  api.get<{ groups: string[] }>('/api/ldap/groups', { query: { search } });

export const saveGroupPermissions = (dn: string, permissionIds: number[]) =>
  api.post<{ message: string }>('/api/ldap/mappings/bulk', {
    ldap_group_dn: dn,
    permission_ids: permissionIds,
  });

export const deleteMapping = (id: number) =>
  api.delete<{ message: string }>(`/api/ldap/mappings/${id}`);

export const saveGroupTags = (dn: string, slugs: string[]) =>
  api.post<{ message: string }>('/api/ldap/group-tags', { ldap_group_dn: dn, tag_slugs: slugs });

export const syncDirectory = () => api.post<SyncAnswer>('/api/ldap/sync');
