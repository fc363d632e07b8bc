/**
 * Routes of the agents feature (spec part 2 "Agent installer", "Agent probes", "Agent
 * administration"; the designed POST /api/agent/results, docs/agent-protocol.md §5).
 *
 * The agent's own routes (enroll, checkin, results) are public: their credential is the request
 * signature, checked over the exact body bytes, which a preParsing hook of this plugin keeps.
 * Rate limits are per source address (the socket's, unless APPLIANCE_TRUSTED_PROXIES names the
 * peer: Fastify's trustProxy decides `request.ip`), adoption per user.
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { ApiFailure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, anyOf, publicAccess, tokenOrSignature } from '../../platform/http/identity.js';
import { PER_MINUTE, perUser } from '../../platform/http/rate-limit.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, MediaBody, MessageBody } from '../../platform/http/schemas.js';
import { ARCHES, type Arch } from './agent-protocol.rules.js';
import {
  AdoptBody,
  Adopted,
  AgentIdAnswer,
  AgentIdBody,
  CheckinBody,
  CreatedToken,
  CreateTokenBody,
  DeviceIdBody,
  DeviceidBody,
  DownloadQuery,
  EnrollBody,
  KeyBundle,
  Listed,
  PathBody,
  PendingAnswer,
  Process,
  ResultBody,
  Revoked,
  Service,
  TokenList,
  TokenParams,
  TokenRecord,
  Usage,
} from './agents.schema.js';
import type { AgentsService, SignedRequest } from './agents.service.js';
import { Type, type TSchema } from '@sinclair/typebox';

const TAGS = ['agents'];
const CHECKIN_LIMIT = { max: 60, timeWindow: PER_MINUTE };
const ENROLL_LIMIT = { max: 30, timeWindow: PER_MINUTE };
const RESULTS_LIMIT = { max: 120, timeWindow: PER_MINUTE };
const ADOPT_LIMIT = { max: 15, timeWindow: PER_MINUTE, keyGenerator: perUser };
const RESULT_BODY_LIMIT = 8 * 1024 * 1024;
const DEVICE_NOT_FOUND = 'Device not found';

/** `{error}` families with the spec's text for an unexpected failure. */
const agentErrors = (internal: string): RouteErrors => ({
  validation: 'errors',
  failure: 'error',
  internal,
});
/** The processes probe (and services, its sibling): `{message}`, 400 on failure. */
const MESSAGE_400: RouteErrors = {
  validation: 'message',
  validationStatus: 400,
  failure: 'message',
};
/** Disk, folder and file routes: HTTP 200 `{status: false, message}` for every failure. */
const STATUS_FALSE: RouteErrors = {
  validation: 'statusMessage',
  validationStatus: 200,
  failure: 'statusMessage',
};
/** The download: `{status: false, message}` with the status. */
const DOWNLOAD_ERRORS: RouteErrors = {
  validation: 'statusMessage',
  validationStatus: 400,
  failure: 'statusMessage',
  unauthenticated: {
    status: 401,
    family: 'statusMessage',
    message: 'Invalid or expired download signature',
  },
};

declare module 'fastify' {
  interface FastifyRequest {
    agentRawBody?: string;
  }
}

/** The origin agents reach this appliance at: the public origin, else the socket's local address. */
export function serverUrlOf(request: FastifyRequest, publicOrigin: string | undefined): string {
  if (publicOrigin !== undefined) return publicOrigin;
  const raw = request.socket.localAddress ?? '127.0.0.1';
  const address = raw.startsWith('::ffff:') ? raw.slice(7) : raw;
  const host = address.includes(':') ? `[${address}]` : address;
  return `https://${host}:${request.socket.localPort}`;
}

export async function agentsRoutes(
  app: App,
  ctx: CoreContext,
  deps: { agents: AgentsService },
): Promise<void> {
  const { agents } = deps;
  const signed = (request: FastifyRequest): SignedRequest => ({
    path: request.url.split('?')[0] as string,
    rawBody: request.agentRawBody ?? '',
    headers: request.headers,
    ip: request.ip,
    serverUrl: serverUrlOf(request, ctx.config.publicOrigin),
  });

  // The signed routes: the exact body bytes are kept for the signature (§3).
  await app.register(async (child) => {
    child.addHook('preParsing', async (request, _reply, payload) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const limit = request.routeOptions.bodyLimit ?? 1_048_576;
      for await (const chunk of payload) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
        size += buffer.length;
        if (size > limit)
          throw Object.assign(new Error('Request body is too large'), {
            statusCode: 413,
            code: 'FST_ERR_CTP_BODY_TOO_LARGE',
          });
        chunks.push(buffer);
      }
      const raw = Buffer.concat(chunks);
      request.agentRawBody = raw.toString('utf8');
      const stream = Readable.from([raw]) as Readable & { receivedEncodedLength?: number };
      stream.receivedEncodedLength = raw.length;
      return stream;
    });
    const api = child as unknown as App;

    // spec: part2 > Agent administration > POST /api/agent/enroll
    defineRoute(api, {
      method: 'POST',
      url: '/api/agent/enroll',
      access: publicAccess,
      errors: agentErrors('Enrollment failed'),
      tags: TAGS,
      summary: 'Enroll an agent with a token (signed by the agent key, docs/agent-protocol.md §3)',
      body: EnrollBody,
      rateLimit: ENROLL_LIMIT,
      response: { 200: KeyBundle, 401: ErrorBody, 409: ErrorBody },
      handler: async (request) => agents.enroll(signed(request), request.body),
    });

    // spec: part2 > Agent administration > POST /api/agent/checkin
    defineRoute(api, {
      method: 'POST',
      url: '/api/agent/checkin',
      access: publicAccess,
      errors: agentErrors('Check-in failed'),
      tags: TAGS,
      summary: 'An agent checks in (signed by the agent key, docs/agent-protocol.md §3)',
      body: CheckinBody,
      rateLimit: CHECKIN_LIMIT,
      response: { 200: KeyBundle, 202: PendingAnswer, 401: ErrorBody, 409: ErrorBody },
      handler: async (request, reply) => {
        const answer = agents.checkin(signed(request), request.body);
        if (answer.status === 202) {
          reply.code(202);
          return { status: 'pending' as const, message: answer.message };
        }
        return answer.bundle;
      },
    });

    // designed: docs/agent-protocol.md §5
    defineRoute(api, {
      method: 'POST',
      url: '/api/agent/results',
      access: publicAccess,
      errors: agentErrors('Result not accepted'),
      tags: TAGS,
      summary: "An agent's result of a signed request (signed by the agent key)",
      body: ResultBody,
      bodyLimit: RESULT_BODY_LIMIT,
      rateLimit: RESULTS_LIMIT,
      response: {
        204: Type.Null({ description: 'Accepted' }),
        401: ErrorBody,
        404: ErrorBody,
        413: ErrorBody,
      },
      handler: async (request, reply) => {
        agents.result(signed(request), request.body);
        reply.code(204);
        return null;
      },
    });
  });

  // spec: part2 > Agent installer > GET /api/agent/download
  defineRoute(app, {
    method: 'GET',
    url: '/api/agent/download',
    access: tokenOrSignature((request) =>
      agents.downloadSignatureValid(request.query as Record<string, unknown>),
    ),
    errors: DOWNLOAD_ERRORS,
    tags: TAGS,
    summary: 'Download the staged agent installer (bearer token or signed URL)',
    querystring: DownloadQuery,
    produces: ['application/octet-stream', 'application/json'],
    response: {
      200: MediaBody(
        'application/octet-stream',
        'The agent bundle (gzip tar)',
        Type.String({ format: 'binary' }),
      ),
      404: Type.Object({ status: Type.Literal(false), message: Type.String() }),
    },
    handler: async (request, reply) => {
      const arch = request.query.arch ?? 'amd64';
      if (!(ARCHES as readonly string[]).includes(arch))
        throw new ApiFailure(400, 'Unsupported architecture: use amd64 or arm64');
      const staged = agents.staged(arch as Arch);
      if (!staged) throw new ApiFailure(404, `No agent installer is staged for ${arch}`);
      const size = fs.statSync(staged.file).size;
      return reply
        .type('application/octet-stream')
        .header('content-length', size)
        .header(
          'content-disposition',
          `attachment; filename="netmon-agent-${staged.version}-${arch}.tar.gz"`,
        )
        .send(fs.createReadStream(staged.file) as never);
    },
  });

  // --- enrollment tokens -----------------------------------------------------------------------

  // spec: part2 > Agent administration > GET /api/agent-tokens
  defineRoute(app, {
    method: 'GET',
    url: '/api/agent-tokens',
    access: allOf('agentadmin'),
    errors: 'errors',
    tags: TAGS,
    summary: 'Active enrollment tokens, newest first',
    response: { 200: TokenList },
    handler: async () => agents.listTokens(),
  });

  // spec: part2 > Agent administration > POST /api/agent-tokens
  defineRoute(app, {
    method: 'POST',
    url: '/api/agent-tokens',
    access: allOf('agentadmin'),
    errors: agentErrors('Failed to create token'),
    tags: TAGS,
    summary: 'Create an enrollment token (the plaintext is in this answer only)',
    body: CreateTokenBody,
    response: { 201: CreatedToken },
    handler: async (request, reply) => {
      const created = agents.createToken(request, identityOf(request), request.body);
      reply.code(201);
      return created;
    },
  });

  // spec: part2 > Agent administration > GET /api/agent-tokens/{id}
  defineRoute(app, {
    method: 'GET',
    url: '/api/agent-tokens/:id',
    access: allOf('agentadmin'),
    errors: 'errors',
    tags: TAGS,
    summary: 'One enrollment token (any state)',
    params: TokenParams,
    response: { 200: TokenRecord, 404: ErrorBody },
    handler: async (request) => agents.getToken(request.params.id),
  });

  // spec: part2 > Agent administration > DELETE /api/agent-tokens/{id}
  defineRoute(app, {
    method: 'DELETE',
    url: '/api/agent-tokens/:id',
    access: allOf('agentadmin'),
    errors: 'errors',
    tags: TAGS,
    summary: 'Revoke an enrollment token (the row is kept for audit)',
    params: TokenParams,
    response: { 200: Revoked, 404: ErrorBody, 409: ErrorBody },
    handler: async (request) => agents.revoke(request, request.params.id),
  });

  // spec: part2 > Agent administration > POST /api/agent/adopt-by-token
  defineRoute(app, {
    method: 'POST',
    url: '/api/agent/adopt-by-token',
    access: allOf('devices', 'write_devices'),
    errors: agentErrors('Adoption failed'),
    tags: TAGS,
    summary: "Adopt a host's agent by its adoption key (UDP exchange, docs/agent-protocol.md §6)",
    body: AdoptBody,
    rateLimit: ADOPT_LIMIT,
    response: { 200: Adopted, 404: ErrorBody, 409: ErrorBody },
    handler: async (request) =>
      agents.adopt(
        request,
        identityOf(request),
        request.body,
        serverUrlOf(request, ctx.config.publicOrigin),
      ),
  });

  // --- probes ----------------------------------------------------------------------------------

  const fail = (status: number, message: string) => new ApiFailure(status, message);

  // spec: part2 > Agent probes > POST /api/getDeviceProcesses
  defineRoute(app, {
    method: 'POST',
    url: '/api/getDeviceProcesses',
    access: allOf('devices'),
    errors: MESSAGE_400,
    tags: TAGS,
    summary: "A device's processes, from its agent",
    body: DeviceIdBody,
    response: { 200: Listed(Type.Array(Process)), 400: MessageBody, 404: MessageBody },
    handler: async (request) => {
      const r = await agents.probe(
        identityOf(request),
        request.body.device_id,
        'processes',
        {},
        DEVICE_NOT_FOUND,
      );
      if (!r.ok) throw fail(400, r.error);
      if (!Array.isArray(r.data)) throw fail(400, 'The agent answered no process list');
      return { status: 201 as const, message: r.data as never };
    },
  });

  // spec: part2 > Agent probes > POST /api/getDeviceServices
  defineRoute(app, {
    method: 'POST',
    url: '/api/getDeviceServices',
    access: allOf('devices'),
    errors: MESSAGE_400,
    tags: TAGS,
    summary: "A device's services, from its agent",
    body: DeviceIdBody,
    response: { 200: Listed(Type.Array(Service)), 400: MessageBody, 404: MessageBody },
    handler: async (request) => {
      const r = await agents.probe(
        identityOf(request),
        request.body.device_id,
        'services',
        {},
        DEVICE_NOT_FOUND,
      );
      if (!r.ok) throw fail(400, r.error);
      if (!Array.isArray(r.data)) throw fail(400, 'The agent answered no service list');
      return { status: 201 as const, message: r.data as never };
    },
  });

  // spec: part2 > Agent probes > POST /api/getAgentID
  defineRoute(app, {
    method: 'POST',
    url: '/api/getAgentID',
    access: anyOf('devices', 'write_devices'),
    errors: MESSAGE_400,
    tags: TAGS,
    summary: 'The agent uuid of a device (by id or IP address), confirmed by the agent',
    body: AgentIdBody,
    response: { 200: AgentIdAnswer, 400: MessageBody, 404: MessageBody },
    handler: async (request) => {
      const { device_id: id, ip_address: ip } = request.body;
      if ((id === undefined) === (ip === undefined))
        throw fail(400, 'Either device ID or IP address is required');
      const identity = identityOf(request);
      const deviceId = id ?? agents.deviceByIp(ip as string);
      if (deviceId === null) throw fail(404, DEVICE_NOT_FOUND);
      const r = await agents.probe(identity, deviceId, 'identify', {}, DEVICE_NOT_FOUND);
      if (!r.ok) throw fail(400, r.error);
      const uuid = (r.data as { agent_uuid?: unknown } | null)?.agent_uuid;
      if (typeof uuid !== 'string') throw fail(400, 'The agent answered no identity');
      return { status: 200 as const, message: uuid };
    },
  });

  const diskRoute = (
    url: string,
    summary: string,
    op: string,
    success: TSchema,
    answer: (data: unknown) => unknown,
  ) =>
    defineRoute(app, {
      method: 'POST',
      url,
      access: allOf('devices'),
      errors: STATUS_FALSE,
      tags: TAGS,
      summary,
      body: DeviceidBody,
      response: {
        200: success,
        404: Type.Object({ status: Type.Literal(false), message: Type.String() }),
      },
      handler: async (request) => {
        const r = await agents.probe(
          identityOf(request),
          request.body.deviceid,
          op,
          {},
          DEVICE_NOT_FOUND,
        );
        if (!r.ok) throw fail(200, r.error);
        return { status: 201 as const, message: answer(r.data) as never };
      },
    });

  // spec: part2 > Agent probes > POST /api/generateDiskUsage
  diskRoute(
    '/api/generateDiskUsage',
    'Start a disk usage report on the agent',
    'disk.generate',
    Listed(Type.String()),
    () => 'Disk usage report started',
  );
  // spec: part2 > Agent probes > POST /api/getDetailedDiskUsage
  diskRoute(
    '/api/getDetailedDiskUsage',
    "The agent's last disk usage report",
    'disk.detail',
    Listed(Type.Array(Usage)),
    (data) => (Array.isArray(data) ? (data as unknown[]) : []),
  );

  // spec: part2 > Agent probes > POST /api/getFolderUsageFromPath
  defineRoute(app, {
    method: 'POST',
    url: '/api/getFolderUsageFromPath',
    access: allOf('devices'),
    errors: STATUS_FALSE,
    tags: TAGS,
    summary: 'The usage of one folder on the agent (depth 2)',
    body: PathBody,
    response: {
      200: Listed(Usage),
      404: Type.Object({ status: Type.Literal(false), message: Type.String() }),
    },
    handler: async (request) => {
      const { deviceid, path } = request.body;
      if (!isAbsolute(path)) throw fail(200, 'The path must be absolute');
      const r = await agents.probe(
        identityOf(request),
        deviceid,
        'folder.usage',
        { path },
        DEVICE_NOT_FOUND,
      );
      if (!r.ok) throw fail(200, r.error);
      return { status: 201 as const, message: r.data as never };
    },
  });

  const deleteRoute = (url: string, kind: 'file' | 'folder') =>
    defineRoute(app, {
      method: 'POST',
      url,
      access: allOf('agentadmin'),
      errors: STATUS_FALSE,
      tags: TAGS,
      summary: `Delete a ${kind} on the agent's host (immediate and permanent, audited)`,
      body: PathBody,
      response: {
        200: Listed(Type.String()),
        404: Type.Object({ status: Type.Literal(false), message: Type.String() }),
      },
      handler: async (request) => {
        const { deviceid, path } = request.body;
        const identity = identityOf(request);
        agents.target(identity, deviceid, DEVICE_NOT_FOUND);
        if (!isAbsolute(path)) throw fail(200, 'The path must be absolute');
        const r = await agents.probe(
          identity,
          deviceid,
          `${kind}.delete`,
          { path },
          DEVICE_NOT_FOUND,
        );
        agents.auditDeletion(request, deviceid, kind, path, r.ok ? 'success' : 'failure');
        if (!r.ok) throw fail(200, r.error);
        return { status: 201 as const, message: `Deleted ${path}` };
      },
    });
  // spec: part2 > Agent administration > POST /api/tryDeleteFile
  deleteRoute('/api/tryDeleteFile', 'file');
  // spec: part2 > Agent administration > POST /api/tryDeleteFolder
  deleteRoute('/api/tryDeleteFolder', 'folder');
}

/** A Unix absolute path, or a Windows drive or UNC one; never with NUL. */
function isAbsolute(p: string): boolean {
  if (p.includes('\0')) return false;
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}
