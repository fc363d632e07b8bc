import { Type, type Static } from '@sinclair/typebox';

const Ok = { status: Type.Literal(201), hasError: Type.Literal(false) };

const fields = {
  host: Type.String({ maxLength: 255 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  use_ssl: Type.Boolean({ description: 'LDAPS' }),
  use_tls: Type.Boolean({ description: 'STARTTLS' }),
  verify_tls: Type.Boolean({
    description: "Verify the directory's certificate against the trusted CAs (default true)",
  }),
  base_dn: Type.String({ maxLength: 512 }),
  bind_dn: Type.String({ maxLength: 512 }),
  search_filter: Type.String({ maxLength: 512 }),
  username_attribute: Type.String({ maxLength: 64 }),
  email_attribute: Type.String({ maxLength: 64 }),
  first_name_attribute: Type.String({ maxLength: 64 }),
  last_name_attribute: Type.String({ maxLength: 64 }),
  directory_type: Type.Union([Type.Literal('active_directory'), Type.Literal('openldap')]),
  timeout: Type.Integer({ minimum: 1, maximum: 60, description: 'seconds' }),
  fallback_to_local: Type.Boolean(),
  auto_provision: Type.Boolean(),
  expand_nested_groups: Type.Boolean(),
};

const optional = Type.Partial(Type.Object(fields)).properties;

const BindPassword = Type.String({
  maxLength: 1024,
  writeOnly: true,
  description:
    'Write-only: encrypted at rest, never returned; omitted or empty keeps the stored one',
});

export const ConfigBody = Type.Object({
  enabled: Type.Boolean(),
  ...optional,
  bind_password: Type.Optional(BindPassword),
});
export type ConfigBody = Static<typeof ConfigBody>;

export const TestBody = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  ...optional,
  bind_password: Type.Optional(BindPassword),
});
export type TestBody = Static<typeof TestBody>;

export const DirectoryConfig = Type.Object(
  { enabled: Type.Boolean(), ...fields },
  {
    description: 'The directory configuration; the bind password is never included',
  },
);

export const ConfigRead = Type.Object({
  ...Ok,
  config: Type.Union([DirectoryConfig, Type.Null()]),
});
export const OkMessage = Type.Object({ ...Ok, message: Type.String() });
export const TestResult = Type.Object({
  ...Ok,
  message: Type.String(),
  groups_found: Type.Integer(),
  groups: Type.Array(Type.String()),
});
export const GroupsQuery = Type.Object({ search: Type.Optional(Type.String({ maxLength: 255 })) });
export const GroupsList = Type.Object({ ...Ok, groups: Type.Array(Type.String()) });

export const Mapping = Type.Object({
  id: Type.Integer(),
  ldap_group_dn: Type.String(),
  ldap_group_name: Type.String(),
  permission_id: Type.Integer(),
  permission_name: Type.String(),
  permission_slug: Type.String(),
});
export const MappingsList = Type.Object({ ...Ok, mappings: Type.Array(Mapping) });

const GroupDn = Type.String({ minLength: 1, maxLength: 512 });
const GroupName = Type.String({ maxLength: 255 });
const PermissionId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const MappingBody = Type.Object({
  ldap_group_dn: GroupDn,
  ldap_group_name: Type.Optional(GroupName),
  permission_id: PermissionId,
});
export type MappingBody = Static<typeof MappingBody>;
export const MappingSaved = Type.Object({
  ...Ok,
  mapping: Type.Object({
    id: Type.Integer(),
    ldap_group_dn: Type.String(),
    ldap_group_name: Type.String(),
    permission_id: Type.Integer(),
  }),
});

export const BulkBody = Type.Object({
  ldap_group_dn: GroupDn,
  ldap_group_name: Type.Optional(GroupName),
  permission_ids: Type.Array(PermissionId, { maxItems: 100 }),
});
export type BulkBody = Static<typeof BulkBody>;

export const MappingIdParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});

export const GroupTag = Type.Object({
  ldap_group_dn: Type.String(),
  tag_id: Type.Integer(),
  slug: Type.String(),
  name: Type.String(),
});
export const GroupTagsList = Type.Object({ ...Ok, tags: Type.Array(GroupTag) });
export const GroupTagsBody = Type.Object({
  ldap_group_dn: GroupDn,
  tag_slugs: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 500 }),
});
export type GroupTagsBody = Static<typeof GroupTagsBody>;

export const SyncResult = Type.Object({
  ...Ok,
  message: Type.String(),
  synced: Type.Integer(),
  errors: Type.Integer(),
});
