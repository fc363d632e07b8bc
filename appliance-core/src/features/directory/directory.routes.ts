/**
 * Directory (LDAP) integration (spec part 1, permission `sa`). Every failure, validation
 * included, is HTTP 200 `{status: false, hasError: true, message}`.
 */
import { actorOf, recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { legacy200 } from '../../platform/http/schemas.js';
import { DirectoryFailure } from './directory.runtime.js';
import {
  deleteMapping,
  deviceTagIdsBySlug,
  existingPermissionIds,
  listGroupTags,
  listMappings,
  replaceGroupPermissions,
  replaceGroupTags,
  upsertMapping,
} from './directory.repository.js';
import { configProblem, firstRdnValue } from './directory.rules.js';
import {
  BulkBody,
  ConfigBody,
  ConfigRead,
  GroupsList,
  GroupsQuery,
  GroupTagsBody,
  GroupTagsList,
  MappingBody,
  MappingIdParams,
  MappingSaved,
  MappingsList,
  OkMessage,
  SyncResult,
  TestBody,
  TestResult,
} from './directory.schema.js';
import {
  type DirectoryService,
  effective,
  PASSWORD_NEEDED,
  toPublic,
} from './directory.service.js';

const TAGS = ['directory'];
const SA = { access: allOf('sa'), errors: 'legacy', tags: TAGS } as const;
const OK = { status: 201 as const, hasError: false as const };

/** A directory failure as the legacy body (its message never holds a secret). */
function refused(err: unknown): never {
  if (err instanceof DirectoryFailure) throw failure(200, err.message);
  throw err;
}

export async function directoryRoutes(
  app: App,
  ctx: CoreContext,
  deps: { directory: DirectoryService },
): Promise<void> {
  const { db, clock } = ctx;
  const { directory } = deps;

  // spec: part1 > Directory (LDAP) integration > GET /api/ldap/config
  defineRoute(app, {
    method: 'GET',
    url: '/api/ldap/config',
    ...SA,
    summary: 'Read the directory configuration (never the bind password)',
    response: { 200: legacy200(ConfigRead) },
    handler: async () => {
      const row = directory.config();
      return { ...OK, config: row ? toPublic(row) : null };
    },
  });

  // spec: part1 > Directory (LDAP) integration > POST /api/ldap/config
  defineRoute(app, {
    method: 'POST',
    url: '/api/ldap/config',
    ...SA,
    summary: 'Save the directory configuration (single row; bind password written only when sent)',
    body: ConfigBody,
    response: { 200: legacy200(OkMessage) },
    handler: async (request) => {
      const body = request.body;
      const problem = configProblem(body);
      if (problem) throw failure(200, problem);
      db.transaction(() => {
        directory.save(body);
        recordAudit(db, clock.now(), actorOf(request), {
          action: 'directory.configure',
          outcome: 'success',
          detail: {
            enabled: body.enabled,
            host: body.host ?? null,
            credentials_changed: body.bind_password !== undefined && body.bind_password !== '',
          },
        });
      })();
      return { ...OK, message: 'Directory settings saved.' };
    },
  });

  // spec: part1 > Directory (LDAP) integration > POST /api/ldap/test
  defineRoute(app, {
    method: 'POST',
    url: '/api/ldap/test',
    ...SA,
    summary: 'Test a bind with these settings and list the groups found',
    body: TestBody,
    response: { 200: legacy200(TestResult) },
    handler: async (request) => {
      const body = request.body;
      const problem = configProblem({ ...body, enabled: body.enabled ?? true }, true);
      if (problem) throw failure(200, problem);
      const password = directory.passwordForTest(body);
      if (password === null) throw failure(200, PASSWORD_NEEDED);
      const groups = await directory.test(effective(body, password)).catch(refused);
      return {
        ...OK,
        message: `Bind successful: ${groups.length} group${groups.length === 1 ? '' : 's'} found.`,
        groups_found: groups.length,
        groups,
      };
    },
  });

  // spec: part1 > Directory (LDAP) integration > GET /api/ldap/groups
  defineRoute(app, {
    method: 'GET',
    url: '/api/ldap/groups',
    ...SA,
    summary: 'Search the directory for groups (saved configuration)',
    querystring: GroupsQuery,
    response: { 200: legacy200(GroupsList) },
    handler: async (request) => {
      const groups = await directory.groups(request.query.search ?? '').catch(refused);
      return { ...OK, groups };
    },
  });

  // spec: part1 > Directory (LDAP) integration > GET /api/ldap/mappings
  defineRoute(app, {
    method: 'GET',
    url: '/api/ldap/mappings',
    ...SA,
    summary: 'List the group-permission mappings',
    response: { 200: legacy200(MappingsList) },
    handler: async () => ({ ...OK, mappings: listMappings(db) }),
  });

  const requireGroupDn = (dn: string): string => {
    const trimmed = dn.trim();
    if (trimmed === '') throw failure(200, 'The ldap group dn field is required.');
    return trimmed;
  };

  // spec: part1 > Directory (LDAP) integration > POST /api/ldap/mappings
  defineRoute(app, {
    method: 'POST',
    url: '/api/ldap/mappings',
    ...SA,
    summary: 'Map a group to a permission (re-saving the pair updates the name)',
    body: MappingBody,
    response: { 200: legacy200(MappingSaved) },
    handler: async (request) => {
      const body = request.body;
      const dn = requireGroupDn(body.ldap_group_dn);
      if (!existingPermissionIds(db, [body.permission_id]).has(body.permission_id))
        throw failure(200, 'The selected permission id is invalid.');
      const mapping = db.transaction(() => {
        const saved = upsertMapping(
          db,
          dn,
          body.ldap_group_name ?? firstRdnValue(dn),
          body.permission_id,
        );
        recordAudit(db, clock.now(), actorOf(request), {
          action: 'directory.map',
          outcome: 'success',
          target: { type: 'ldap_group', label: dn },
          detail: { permission_id: body.permission_id },
        });
        return saved;
      })();
      return { ...OK, mapping };
    },
  });

  // spec: part1 > Directory (LDAP) integration > POST /api/ldap/mappings/bulk
  defineRoute(app, {
    method: 'POST',
    url: '/api/ldap/mappings/bulk',
    ...SA,
    summary: "Replace a group's whole permission set (an empty array removes it)",
    body: BulkBody,
    response: { 200: legacy200(OkMessage) },
    handler: async (request) => {
      const body = request.body;
      const dn = requireGroupDn(body.ldap_group_dn);
      const known = existingPermissionIds(db, body.permission_ids);
      const unknown = body.permission_ids.filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw failure(200, `The selected permission ids are invalid: ${unknown.join(', ')}.`);
      db.transaction(() => {
        replaceGroupPermissions(
          db,
          dn,
          body.ldap_group_name ?? firstRdnValue(dn),
          body.permission_ids,
        );
        recordAudit(db, clock.now(), actorOf(request), {
          action: 'directory.map',
          outcome: 'success',
          target: { type: 'ldap_group', label: dn },
          detail: { permission_ids: [...new Set(body.permission_ids)] },
        });
      })();
      return { ...OK, message: 'Group permissions saved.' };
    },
  });

  // spec: part1 > Directory (LDAP) integration > DELETE /api/ldap/mappings/{id}
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/ldap/mappings/:id',
    ...SA,
    summary: 'Delete a mapping (affected users lose the permission at next sync or sign-in)',
    params: MappingIdParams,
    response: { 200: legacy200(OkMessage) },
    handler: async (request) => {
      const id = request.params.id;
      const deleted = db.transaction(() => {
        const gone = deleteMapping(db, id);
        if (gone)
          recordAudit(db, clock.now(), actorOf(request), {
            action: 'directory.unmap',
            outcome: 'success',
            target: { type: 'ldap_mapping', id },
          });
        return gone;
      })();
      if (!deleted) throw failure(200, 'Mapping not found.');
      return { ...OK, message: 'Mapping deleted.' };
    },
  });

  // spec: part1 > Directory (LDAP) integration > GET /api/ldap/group-tags
  defineRoute(app, {
    method: 'GET',
    url: '/api/ldap/group-tags',
    ...SA,
    summary: 'List the group tag restrictions',
    response: { 200: legacy200(GroupTagsList) },
    handler: async () => ({ ...OK, tags: listGroupTags(db) }),
  });

  // spec: part1 > Directory (LDAP) integration > POST /api/ldap/group-tags
  defineRoute(app, {
    method: 'POST',
    url: '/api/ldap/group-tags',
    ...SA,
    summary: "Replace a group's tag restrictions (an empty array removes them)",
    body: GroupTagsBody,
    response: { 200: legacy200(OkMessage) },
    handler: async (request) => {
      const body = request.body;
      const dn = requireGroupDn(body.ldap_group_dn);
      const found = deviceTagIdsBySlug(db, body.tag_slugs);
      const unknown = body.tag_slugs.filter((slug) => !found.has(slug));
      if (unknown.length > 0)
        throw failure(200, `The selected tag slugs are invalid: ${unknown.join(', ')}.`);
      db.transaction(() => {
        replaceGroupTags(db, dn, [...new Set(found.values())]);
        recordAudit(db, clock.now(), actorOf(request), {
          action: 'directory.tag',
          outcome: 'success',
          target: { type: 'ldap_group', label: dn },
          detail: { tags: [...found.keys()] },
        });
      })();
      return { ...OK, message: 'Group tags saved.' };
    },
  });

  // spec: part1 > Directory (LDAP) integration > POST /api/ldap/sync
  defineRoute(app, {
    method: 'POST',
    url: '/api/ldap/sync',
    ...SA,
    summary: 'Re-evaluate every directory user (deactivates users gone from the directory)',
    response: { 200: legacy200(SyncResult) },
    handler: async (request) => {
      const actor = actorOf(request);
      const result = await directory.sync(actor).catch(refused);
      recordAudit(db, clock.now(), actor, {
        action: 'directory.sync',
        outcome: 'success',
        detail: { synced: result.synced, errors: result.errors },
      });
      return {
        ...OK,
        message: `Synced ${result.synced} user${result.synced === 1 ? '' : 's'}.`,
        ...result,
      };
    },
  });
}
