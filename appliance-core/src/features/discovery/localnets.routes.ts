/**
 * Local networks (spec part 3 > Appliance settings: getLocalnets, updateLocalnet,
 * resetDiscoveryTs, deleteLocalnet). Saving reschedules discovery at once.
 */
import type { CoreContext } from '../../platform/context.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { legacy200, LegacyStatusBody } from '../../platform/http/schemas.js';
import { existingCredentialIds } from '../devices/index.js';
import type { DiscoveryEngine } from './discovery.engine.js';
import {
  DEFAULT_INTERVAL,
  LegacyDone,
  LocalnetIdBody,
  LocalnetList,
  LocalnetSaved,
  toBool,
  UpdateLocalnetBody,
} from './discovery.schema.js';
import { ipv4ToNumber, MAX_RANGE } from './ipv4.rules.js';
import {
  credIdsOf,
  deleteLocalnet,
  findLocalnet,
  insertLocalnet,
  listLocalnets,
  localnetRecord,
  replaceCredIds,
  resetDiscoveryTs,
  updateLocalnet,
  type LocalnetFields,
} from './localnets.repository.js';

const TAGS = ['settings'];

export interface LocalnetsRoutesDeps {
  discovery: DiscoveryEngine;
}

export async function localnetsRoutes(
  app: App,
  ctx: CoreContext,
  deps: LocalnetsRoutesDeps,
): Promise<void> {
  const { db, clock } = ctx;

  const records = (ids?: readonly number[]) => {
    const creds = credIdsOf(db);
    return listLocalnets(db)
      .filter((row) => !ids || ids.includes(row.id))
      .map((row) => localnetRecord(row, creds.get(row.id) ?? []));
  };

  // spec: part3 > Appliance settings > GET /api/getLocalnets
  defineRoute(app, {
    method: 'GET',
    url: '/api/getLocalnets',
    access: allOf('system'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Local networks swept by discovery (`false` when there are none)',
    response: { 200: LocalnetList },

    handler: async () => {
      const data = records();
      return data.length === 0 ? false : { data };
    },
  });

  // spec: part3 > Appliance settings > POST /api/updateLocalnet
  defineRoute(app, {
    method: 'POST',
    url: '/api/updateLocalnet',
    access: allOf('system'),
    errors: 'legacyStatus',
    tags: TAGS,
    summary: 'Create or update local networks (one bad row rejects the batch)',
    description:
      'Each range (`network`..`broadcast`, inclusive) holds at most 65536 addresses. `interval` is in seconds. `cred_ids` replaces the credential sets, tried in the order given.',
    body: UpdateLocalnetBody,
    response: { 200: LocalnetSaved, 422: LegacyStatusBody },

    handler: async (request) => {
      const rows = request.body.data;
      const plans: {
        id: number | undefined;
        fields: LocalnetFields;
        credIds: number[] | undefined;
      }[] = [];
      const seen = new Set<number>();
      const allCredIds = [...new Set(rows.flatMap((row) => row.cred_ids ?? []))];
      const knownCreds = existingCredentialIds(db, allCredIds);
      rows.forEach((row, index) => {
        const bad = (field: string, message: string) =>
          failure(422, `data.${index}.${field}: ${message}`);
        const existing = row.id === undefined ? undefined : findLocalnet(db, row.id);
        if (row.id !== undefined && !existing) throw bad('id', 'The selected id is invalid.');
        if (row.id !== undefined) {
          if (seen.has(row.id)) throw bad('id', 'The id appears twice in the batch.');
          seen.add(row.id);
        }
        const label = row.label.trim();
        if (label === '') throw bad('label', 'The label field is required.');
        const network = ipv4ToNumber(row.network.trim());
        if (network === null) throw bad('network', 'The network must be a valid IPv4 address.');
        const broadcast = ipv4ToNumber(row.broadcast.trim());
        if (broadcast === null)
          throw bad('broadcast', 'The broadcast must be a valid IPv4 address.');
        if (broadcast < network)
          throw bad('broadcast', 'The broadcast must not be lower than the network.');
        if (broadcast - network + 1 > MAX_RANGE)
          throw bad('broadcast', 'A local network holds at most 65536 addresses (a /16).');
        const unknown = (row.cred_ids ?? []).filter((id) => !knownCreds.has(id));
        if (unknown.length > 0)
          throw bad('cred_ids', `The selected credential ${unknown.join(', ')} is invalid.`);
        plans.push({
          id: existing?.id,
          credIds: row.cred_ids ? [...new Set(row.cred_ids)] : undefined,
          fields: {
            label,
            network: row.network.trim(),
            broadcast: row.broadcast.trim(),
            network_num: network,
            broadcast_num: broadcast,
            interval: row.interval ?? existing?.interval ?? DEFAULT_INTERVAL,
            enable_discovery:
              row.enable_discovery === undefined
                ? existing?.enable_discovery === 1
                : toBool(row.enable_discovery),
            enable_portscan:
              row.enable_portscan === undefined
                ? existing?.enable_portscan === 1
                : toBool(row.enable_portscan),
            alerts: row.alerts === undefined ? existing?.alerts === 1 : toBool(row.alerts),
          },
        });
      });
      const now = clock.now();
      const ids = db.transaction(() =>
        plans.map((plan) => {
          const id = plan.id ?? insertLocalnet(db, plan.fields, now);
          if (plan.id !== undefined) updateLocalnet(db, id, plan.fields, now);
          if (plan.credIds) replaceCredIds(db, id, plan.credIds);
          return id;
        }),
      )();
      for (const id of ids) deps.discovery.sync(id);
      return {
        status: 201 as const,
        hasError: false as const,
        message: 'Local networks saved',
        data: records(ids),
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/resetDiscoveryTs
  defineRoute(app, {
    method: 'POST',
    url: '/api/resetDiscoveryTs',
    access: allOf('system'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Make a local network due for discovery now',
    body: LocalnetIdBody,
    response: { 200: legacy200(LegacyDone) },

    handler: async (request) => {
      if (!resetDiscoveryTs(db, request.body.id)) throw failure(200, 'Local network not found');
      deps.discovery.sync(request.body.id);
      const net = findLocalnet(db, request.body.id);
      return {
        status: 201 as const,
        hasError: false as const,
        message:
          net?.enable_discovery === 1
            ? 'Discovery of this network runs now'
            : 'Discovery timestamp reset (discovery is disabled for this network)',
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/deleteLocalnet
  defineRoute(app, {
    method: 'POST',
    url: '/api/deleteLocalnet',
    access: allOf('system'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Delete a local network (its pending devices stay)',
    body: LocalnetIdBody,
    response: { 200: legacy200(LegacyDone) },

    handler: async (request) => {
      deps.discovery.remove(request.body.id);
      if (!deleteLocalnet(db, request.body.id)) throw failure(200, 'Local network not found');
      return { status: 201 as const, hasError: false as const, message: 'Local network deleted' };
    },
  });
}
