/**
 * Pending devices (spec part 2 > Pending devices; States: pending -> imported | hidden | removed).
 * Tag scoped: a restricted caller sees and changes only rows carrying one of their tags; any
 * other id answers exactly like a missing one (HTTP 404 with the legacy body).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { isSentinel, nextSealedSecret } from '../../platform/http/encrypted-field.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { legacy200, LegacyFieldsBody, LegacyStatusBody } from '../../platform/http/schemas.js';
import { profileExists } from './devices.repository.js';
import {
  ImportPendingBody,
  LegacyMessage,
  PendingIdBody,
  PendingList,
  UpdatePendingFieldBody,
  UpdatePendingTagsBody,
  type DiscoveryStatusRecord,
  type PendingField,
} from './devices.schema.js';
import type { DevicesService } from './devices.service.js';
import {
  deletePending,
  findVisiblePending,
  hidePending,
  listPending,
  pendingRecord,
  pendingTagIds,
  PENDING_COLUMNS,
  replacePendingTags,
  tagsOfPending,
  updatePendingColumn,
  type PendingRow,
} from './pending.repository.js';
import {
  MIN_V3_PASSPHRASE,
  normalizeAuthProtocol,
  normalizePrivProtocol,
  normalizeVersion,
} from '../../platform/snmp/snmp-config.js';
import {
  AUTH_PROTOCOLS,
  PRIV_PROTOCOLS,
  V3_SECURITY_LEVELS,
} from '../../platform/snmp/snmp.client.js';

const TAGS = ['devices'];
const PENDING_NOT_FOUND = 'Pending device not found';
const Done = Type.Object({
  status: Type.Literal(201),
  hasError: Type.Literal(false),
  message: Type.String(),
});

export interface PendingRoutesDeps {
  devices: DevicesService;
  /** The latest discovery sweep of each local network (owned by the discovery feature). */
  discoveryStatus: () => DiscoveryStatusRecord[];
}

type FieldValue = string | number | boolean | null | { __encrypted__: true };

export async function pendingRoutes(
  app: App,
  ctx: CoreContext,
  deps: PendingRoutesDeps,
): Promise<void> {
  const { db, secrets } = ctx;

  const visible = (identity: Identity, id: number): PendingRow => {
    const row = findVisiblePending(db, identity, id);
    if (!row) throw failure(404, PENDING_NOT_FOUND, { family: 'legacyStatus' });
    return row;
  };
  const withNotFound = <T extends Record<number, TSchema>>(own: T) => ({
    ...own,
    404: LegacyStatusBody,
  });

  // spec: part2 > Pending devices > POST /api/getDevicesPending
  defineRoute(app, {
    method: 'POST',
    url: '/api/getDevicesPending',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Pending devices (not hidden, tag scoped) and the latest discovery sweep per network',
    response: { 200: legacy200(PendingList) },

    handler: async (request) => {
      const rows = listPending(db, identityOf(request));
      const tags = tagsOfPending(
        db,
        rows.map((r) => r.id),
      );
      return {
        status: 201 as const,
        hasError: false as const,
        devices: rows.map((row) => pendingRecord(row, tags.get(row.id) ?? [])),
        discovery_status: deps.discoveryStatus(),
      };
    },
  });

  // spec: part2 > Pending devices > POST /api/importPending
  defineRoute(app, {
    method: 'POST',
    url: '/api/importPending',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Import a pending device into the inventory',
    body: ImportPendingBody,
    response: withNotFound({ 200: legacy200(LegacyMessage), 201: LegacyMessage }),

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const row = visible(identity, request.body.id);
      const imported = deps.devices.importPending(identity, row, request.body.tags);
      if (!imported.ok) throw failure(200, imported.message);
      reply.code(201);
      return {
        status: 201 as const,
        hasError: false as const,
        message: `Device ${imported.id} created from the pending device`,
      };
    },
  });

  // spec: part2 > Pending devices > POST /api/hidePendingDevice
  defineRoute(app, {
    method: 'POST',
    url: '/api/hidePendingDevice',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Hide a pending device (kept, not in the default list)',
    body: PendingIdBody,
    response: withNotFound({ 201: Done }),

    handler: async (request, reply) => {
      const row = visible(identityOf(request), request.body.id);
      hidePending(db, row.id);
      reply.code(201);
      return { status: 201 as const, hasError: false as const, message: 'Pending device hidden' };
    },
  });

  // spec: part2 > Pending devices > POST /api/removePendingDevice
  defineRoute(app, {
    method: 'POST',
    url: '/api/removePendingDevice',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Remove a pending device (it may reappear at the next discovery or check-in)',
    body: PendingIdBody,
    response: withNotFound({ 201: Done }),

    handler: async (request, reply) => {
      const row = visible(identityOf(request), request.body.id);
      deletePending(db, row.id);
      reply.code(201);
      return { status: 201 as const, hasError: false as const, message: 'Pending device removed' };
    },
  });

  // spec: part2 > Pending devices > POST /api/updatePendingDeviceField
  defineRoute(app, {
    method: 'POST',
    url: '/api/updatePendingDeviceField',
    access: allOf('write_devices'),
    errors: 'legacyFields',
    tags: TAGS,
    summary: 'Change one field of a pending device (secret fields are encrypted on save)',
    body: UpdatePendingFieldBody,
    response: {
      201: Done,
      404: LegacyStatusBody,
      422: LegacyFieldsBody,
    },

    handler: async (request, reply) => {
      const { id, field, value } = request.body;
      const row = visible(identityOf(request), id);
      const stored = fieldValue(field, value, row);
      if ('error' in stored)
        throw failure(422, stored.error, { fields: { value: [stored.error] } });
      updatePendingColumn(db, row.id, PENDING_COLUMNS[field], stored.value);
      reply.code(201);
      return {
        status: 201 as const,
        hasError: false as const,
        message: `Pending device ${field} updated`,
      };
    },
  });

  // spec: part2 > Pending devices > POST /api/updatePendingDeviceTags
  defineRoute(app, {
    method: 'POST',
    url: '/api/updatePendingDeviceTags',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: "Replace a pending device's tags (missing tags are created)",
    body: UpdatePendingTagsBody,
    response: withNotFound({ 200: legacy200(Done), 201: Done }),

    handler: async (request, reply) => {
      const identity = identityOf(request);
      const row = visible(identity, request.body.id);
      const plan = deps.devices.planTags(
        identity,
        request.body.tags,
        pendingTagIds(db, row.id),
        'replace',
      );
      if (!plan.ok) throw failure(200, plan.message);
      db.transaction(() => replacePendingTags(db, row.id, deps.devices.applyTagPlan(plan)))();
      reply.code(201);
      return {
        status: 201 as const,
        hasError: false as const,
        message: 'Pending device tags updated',
      };
    },
  });

  /** The column value for `field`, or the message that refuses `value`. */
  function fieldValue(
    field: PendingField,
    value: FieldValue,
    row: PendingRow,
  ): { value: string | number | null } | { error: string } {
    const text = typeof value === 'string' ? value.trim() : null;
    switch (field) {
      case 'label':
        return text
          ? { value: text }
          : { error: 'The label must be a non-empty string of at most 255 characters.' };
      case 'profile':
        return text && profileExists(db, text)
          ? { value: text }
          : { error: 'The selected profile is invalid.' };
      case 'enable_snmp':
      case 'enable_agent': {
        if (value === true || value === 1 || value === '1' || value === 'true') return { value: 1 };
        if (value === false || value === 0 || value === '0' || value === 'false')
          return { value: 0 };
        return { error: `The ${field.replace('_', ' ')} value must be true or false.` };
      }
      case 'snmp_port': {
        const port =
          typeof value === 'number' ? value : text && /^\d+$/.test(text) ? Number(text) : NaN;
        return Number.isInteger(port) && port >= 1 && port <= 65535
          ? { value: port }
          : { error: 'The snmp port must be an integer from 1 to 65535.' };
      }
      case 'snmp_version': {
        const version = normalizeVersion(typeof value === 'string' ? value.trim() : value);
        return version ? { value: version } : { error: 'The snmp version must be 1, 2 or 3.' };
      }
      case 'snmp_v3_security':
        if (value === null || text === '') return { value: null };
        return text && (V3_SECURITY_LEVELS as readonly string[]).includes(text)
          ? { value: text }
          : { error: `The snmp v3 security must be one of ${V3_SECURITY_LEVELS.join(', ')}.` };
      case 'authuser':
        if (value === null || text === '') return { value: null };
        return text !== null ? { value: text } : { error: 'The authuser must be a string.' };
      case 'authprot':
      case 'privprot': {
        if (value === null || text === '') return { value: null };
        const normalized =
          field === 'authprot' ? normalizeAuthProtocol(text) : normalizePrivProtocol(text);
        const allowed = field === 'authprot' ? AUTH_PROTOCOLS : PRIV_PROTOCOLS;
        return normalized
          ? { value: normalized }
          : { error: `The ${field} must be one of ${allowed.join(', ')}.` };
      }
      case 'snmp_community':
      case 'authpass':
      case 'privpass': {
        if (value !== null && typeof value !== 'string' && !isSentinel(value))
          return { error: `The ${field.replace('_', ' ')} must be a string.` };
        if (
          field !== 'snmp_community' &&
          typeof value === 'string' &&
          value !== '' &&
          value.length < MIN_V3_PASSPHRASE
        ) {
          return { error: `The ${field} must be at least ${MIN_V3_PASSPHRASE} characters.` };
        }
        return { value: nextSealedSecret(secrets, row[field], value) };
      }
    }
  }
}
