/**
 * Autodiscovery credentials (spec part 2 > Autodiscovery credentials). Secrets are write-only:
 * sealed at rest and masked with the sentinel on every read.
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure } from '../../platform/http/envelopes.js';
import { nextSealedSecret } from '../../platform/http/encrypted-field.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { legacy200 } from '../../platform/http/schemas.js';
import {
  credentialRecord,
  deleteCredential,
  findCredential,
  insertCredential,
  listCredentials,
  updateCredential,
  type CredentialFields,
} from './credentials.repository.js';
import {
  AddEditCredentialBody,
  CredentialList,
  CredentialSaved,
  LegacyMessage,
} from './devices.schema.js';
import {
  MIN_V3_PASSPHRASE,
  normalizeAuthProtocol,
  normalizePrivProtocol,
} from '../../platform/snmp/snmp-config.js';
import { AUTH_PROTOCOLS, PRIV_PROTOCOLS } from '../../platform/snmp/snmp.client.js';

const TAGS = ['devices'];

export async function credentialsRoutes(app: App, ctx: CoreContext): Promise<void> {
  const { db, clock, secrets } = ctx;

  // spec: part2 > Autodiscovery credentials > GET /api/getCredentials
  defineRoute(app, {
    method: 'GET',
    url: '/api/getCredentials',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'List autodiscovery credential sets (secrets masked)',
    response: { 200: legacy200(CredentialList) },

    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      data: listCredentials(db).map(credentialRecord),
    }),
  });

  // spec: part2 > Autodiscovery credentials > POST /api/addEditCredential
  defineRoute(app, {
    method: 'POST',
    url: '/api/addEditCredential',
    access: allOf('write_devices'),
    errors: 'legacy',
    tags: TAGS,
    summary: 'Create, update (with id) or delete (action delete) a credential set',
    description:
      'Secrets (`snmp_community`, `authpass`, `snmp_privpass`) are kept when omitted, empty or the sentinel. `snmp_port` (default 161) is the port discovery sweeps use with this set.',
    body: AddEditCredentialBody,
    response: {
      200: legacy200(LegacyMessage),
      201: Type.Union([CredentialSaved, LegacyMessage]),
    },

    handler: async (request, reply) => {
      const body = request.body;
      if (body.action === 'delete') {
        if (body.id === undefined) throw failure(200, 'The id field is required.');
        if (!deleteCredential(db, body.id)) throw failure(200, 'Credential not found');
        reply.code(201);
        return { status: 201 as const, hasError: false as const, message: 'Credential deleted' };
      }
      if (body.action !== 'addedit') throw failure(200, 'Unknown action');

      const existing = body.id === undefined ? undefined : findCredential(db, body.id);
      if (body.id !== undefined && !existing) throw failure(200, 'Credential not found');
      for (const field of ['label', 'authuser', 'snmp_authprot', 'snmp_privprot'] as const) {
        if (!body[field] || body[field].trim() === '')
          throw failure(200, `The ${field.replace(/_/g, ' ')} field is required.`);
      }
      const authprot = normalizeAuthProtocol(body.snmp_authprot);
      if (!authprot)
        throw failure(200, `The snmp authprot must be one of ${AUTH_PROTOCOLS.join(', ')}.`);
      const privprot = normalizePrivProtocol(body.snmp_privprot);
      if (!privprot)
        throw failure(200, `The snmp privprot must be one of ${PRIV_PROTOCOLS.join(', ')}.`);
      for (const field of ['authpass', 'snmp_privpass'] as const) {
        const value = body[field];
        if (typeof value === 'string' && value !== '' && value.length < MIN_V3_PASSPHRASE)
          throw failure(
            200,
            `The ${field.replace(/_/g, ' ')} must be at least ${MIN_V3_PASSPHRASE} characters.`,
          );
      }
      const fields: CredentialFields = {
        label: (body.label as string).trim(),
        authuser: (body.authuser as string).trim(),
        snmp_authprot: authprot,
        snmp_privprot: privprot,
        snmp_community: nextSealedSecret(
          secrets,
          existing?.snmp_community ?? null,
          body.snmp_community,
        ),
        authpass: nextSealedSecret(secrets, existing?.authpass ?? null, body.authpass),
        snmp_privpass: nextSealedSecret(
          secrets,
          existing?.snmp_privpass ?? null,
          body.snmp_privpass,
        ),
        snmp_port: body.snmp_port ?? existing?.snmp_port ?? 161,
      };
      const now = clock.now();
      const id = existing ? existing.id : insertCredential(db, fields, now);
      if (existing) updateCredential(db, id, fields, now);
      reply.code(201);
      return {
        status: 201 as const,
        hasError: false as const,
        credential: { id, label: fields.label },
      };
    },
  });
}
