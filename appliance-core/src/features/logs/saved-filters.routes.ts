/**
 * The four saved-filter routes of a feed (spec part 3 "Shared log-feed rules"): list, create or
 * update, toggle, delete, under `<prefix>/filters`, permission `logs` (flows registers its own
 * with its permission). The bodies of failures are the spec's, which differ per route and status
 * (saved-filters.service.ts); the handlers send them as the service states them.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, type Access } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, FieldErrorsMap, IdParam, MessageBody } from '../../platform/http/schemas.js';
import { SavedFilterFailure, type SavedFilters } from './saved-filters.service.js';

const FilterRecord = Type.Object({
  id: Type.Integer(),
  users_id: Type.Integer(),
  label: Type.String(),
  filter: Type.Record(Type.String(), Type.Unknown()),
  enabled: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const FilterList = Type.Object({ message: Type.String(), filters: Type.Array(FilterRecord) });
const FilterSaved = Type.Object({ message: Type.String(), filter: FilterRecord });
const SaveBody = Type.Object(
  {
    label: Type.Optional(Type.Unknown()),
    filter: Type.Optional(Type.Unknown()),
    id: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);
const FilterIdParams = Type.Object({ filterId: IdParam() });
const FORM_OR_JSON = ['application/json', 'application/x-www-form-urlencoded'] as const;

const ERRORS: RouteErrors = { validation: 'error', failure: 'error' };

function answer(reply: FastifyReply, err: unknown): never | FastifyReply {
  if (err instanceof SavedFilterFailure) return reply.code(err.status).send(err.body);
  throw err;
}

export function savedFilterRoutes(
  app: App,
  filters: SavedFilters,
  options: { prefix: string; tag: string; access?: Access },
): void {
  const access = options.access ?? allOf('logs');
  const tags = [options.tag];
  const base = `${options.prefix}/filters`;

  defineRoute(app, {
    method: 'GET',
    url: base,
    access,
    errors: ERRORS,
    tags,
    summary: 'The caller’s saved filters of this feed',
    response: { 200: FilterList },
    handler: async (request) => ({
      message: 'Filters retrieved successfully.',
      filters: filters.list(identityOf(request).user.id),
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: base,
    access,
    errors: ERRORS,
    tags,
    summary: 'Create a saved filter, or update an own one (`id`)',
    accepts: FORM_OR_JSON,
    consumes: [...FORM_OR_JSON],
    body: SaveBody,
    response: {
      200: FilterSaved,
      201: FilterSaved,
      403: MessageBody,
      422: Type.Union([ErrorBody, FieldErrorsMap]),
    },
    handler: async (request, reply) => {
      try {
        const saved = filters.save(identityOf(request).user.id, request.body ?? {});
        reply.code(saved.created ? 201 : 200);
        return {
          message: saved.created ? 'Filter created successfully.' : 'Filter updated successfully.',
          filter: saved.filter,
        };
      } catch (err) {
        return answer(reply, err);
      }
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: `${base}/toggle/:filterId`,
    access,
    errors: ERRORS,
    tags,
    summary: 'Enable or disable an own saved filter; answers the full list',
    params: FilterIdParams,
    response: { 201: FilterList, 404: ErrorBody },
    handler: async (request, reply) => {
      try {
        const list = filters.toggle(identityOf(request).user.id, request.params.filterId);
        reply.code(201);
        return { message: 'Filter toggled successfully.', filters: list };
      } catch (err) {
        return answer(reply, err);
      }
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: `${base}/:filterId`,
    access,
    errors: { validation: 'message', failure: 'message' },
    tags,
    summary: 'Delete an own saved filter',
    params: FilterIdParams,
    response: { 200: MessageBody, 404: MessageBody },
    handler: async (request, reply) => {
      try {
        filters.delete(identityOf(request).user.id, request.params.filterId);
        return { message: 'Filter deleted successfully.' };
      } catch (err) {
        return answer(reply, err);
      }
    },
  });
}
