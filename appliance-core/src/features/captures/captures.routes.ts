/**
 * The packet capture endpoints (spec part 3 > Packet capture, permission `capture`).
 *
 * Error shapes: validation 422 `{message, errors}`; every other failure
 * `{status: 'error', reason?, message}` (the statusError family): 404 `not found` for a missing,
 * invisible or malformed id on every route; 409 `still-active`; 422 `bad-filter` /
 * `bad-interface` when the engine refuses; 503 `too-many`; 502 (no reason) without an engine.
 * Non-`sa` callers see only their own captures; `sa` sees all.
 */
import { Type } from '@sinclair/typebox';
import { actorOf, audited } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, isSuperAdmin, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { MediaBody, MessageErrorsBody } from '../../platform/http/schemas.js';
import { compileFilter, filterErrors, type CaptureFilter } from './capture-filter.rules.js';
import type { CaptureInterfaces } from './capture-interfaces.service.js';
import { captureRecord, downloadName } from './capture-record.rules.js';
import type { CaptureRow } from './captures.repository.js';
import {
  CaptureEnvelope,
  CaptureIdParams,
  CaptureList,
  ChunksBody,
  ChunksQuery,
  CreateCaptureBody,
  DeletedBody,
  InterfaceList,
  NotFoundBody,
  StatusErrorBody,
} from './captures.schema.js';
import { CaptureFailure, type CapturesService } from './captures.service.js';

const TAGS = ['captures'];
const ERRORS: RouteErrors = {
  validation: 'messageErrors',
  failure: 'statusError',
  internal: 'Capture failed',
};
const NOT_FOUND = 'not found';
const DEFAULT_BYTE_CAP = 10_485_760;
const DEFAULT_DEADLINE_S = 600;

export interface CapturesDeps {
  captures: CapturesService;
  interfaces: CaptureInterfaces;
  /** The device when it exists and the caller may see it (devices' visibleDevice). */
  visibleDevice: (identity: Identity, deviceId: number) => { ip_address: string } | null;
}

/** A plain decimal id, or null (`..%2f`, `%2e%2e/`, absolute paths, over-long values ...). */
export function parseCaptureId(text: string): number | null {
  if (!/^[1-9][0-9]{0,14}$/.test(text)) return null;
  return Number(text);
}

function notFound() {
  return failure(404, NOT_FOUND);
}

function fieldFailure(fields: Record<string, string[]>) {
  const first = Object.values(fields)[0]?.[0] ?? 'The given data was invalid.';
  return failure(422, first, { fields, family: 'messageErrors' });
}

function serviceFailure(err: unknown): unknown {
  if (!(err instanceof CaptureFailure)) return err;
  switch (err.kind) {
    case 'too-many':
      return failure(503, err.message, { reason: 'too-many' });
    case 'still-active':
      return failure(409, err.message, { reason: 'still-active' });
    case 'rejected':
      return failure(422, err.message, { reason: err.reason ?? 'bad-filter' });
    case 'unavailable':
      return failure(502, err.message);
  }
}

export async function capturesRoutes(
  app: App,
  ctx: CoreContext,
  deps: CapturesDeps,
): Promise<void> {
  const { captures } = deps;
  /** The capture when it exists and the caller may see it (own, or any for `sa`). */
  const visible = (identity: Identity, idText: string): CaptureRow => {
    const id = parseCaptureId(idText);
    const row = id === null ? null : captures.find(id);
    if (!row || (!isSuperAdmin(identity) && row.user_id !== identity.user.id)) throw notFound();
    return row;
  };

  // spec: part3 > Packet capture
  defineRoute(app, {
    method: 'GET',
    url: '/api/captures',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'List captures (own; all for sa), newest first, at most 200',
    response: { 200: CaptureList },
    handler: async (request) => {
      const identity = identityOf(request);
      const rows = captures.list(isSuperAdmin(identity) ? null : identity.user.id);
      return { captures: rows.map(captureRecord) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api/captures/interfaces',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'The capturable interfaces',
    response: { 200: InterfaceList },
    handler: async () => ({ interfaces: deps.interfaces.list() }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/captures',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'Start a capture; answers once it is running',
    body: CreateCaptureBody,
    response: {
      201: CaptureEnvelope,
      422: Type.Union([StatusErrorBody, MessageErrorsBody]),
      502: StatusErrorBody,
      503: StatusErrorBody,
    },
    handler: async (request, reply) => {
      const identity = identityOf(request);
      const body = request.body;
      const filter = body.filter as CaptureFilter;
      const fields = filterErrors(filter);
      let deviceAddress: string | null = null;
      if (body.device_id != null) {
        const device = deps.visibleDevice(identity, body.device_id);
        // Out of scope is treated as missing (the tag-scoping convention).
        if (!device) fields.device_id = ['The selected device id is invalid.'];
        else deviceAddress = device.ip_address;
      } else if (identity.tagIds !== null) {
        fields.device_id = [
          'The device id field is required: your account is restricted to tagged devices.',
        ];
      }
      if (Object.keys(fields).length > 0) throw fieldFailure(fields);
      const ifaces = filter.ifaces?.length
        ? [...new Set(filter.ifaces)]
        : deps.interfaces.defaults();
      const known = new Set(deps.interfaces.list());
      const unknown = ifaces.filter((i) => !known.has(i));
      if (unknown.length > 0)
        throw failure(422, `No such interface to capture on: ${unknown.join(', ')}.`, {
          reason: 'bad-interface',
        });
      const bpf = compileFilter(filter, deviceAddress);
      const created = await captures
        .create({
          userId: identity.user.id,
          deviceId: body.device_id ?? null,
          label: body.label ?? null,
          filter,
          bpf,
          ifaces,
          ephemeral: body.ephemeral ?? false,
          byteCap: body.byte_cap ?? DEFAULT_BYTE_CAP,
          deadlineS: body.deadline_s ?? DEFAULT_DEADLINE_S,
        })
        .catch((err: unknown) => {
          throw serviceFailure(err);
        });
      const row = audited(
        ctx.db,
        ctx.clock.now(),
        actorOf(request),
        () => created,
        () => ({
          action: 'capture.start',
          outcome: 'success',
          target: { type: 'capture', id: created.id, label: created.label ?? undefined },
          detail: { bpf, ifaces, engine: created.engine },
        }),
      );
      reply.code(201);
      return { capture: captureRecord(row) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api/captures/:id',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'One capture, counters refreshed while it runs',
    params: CaptureIdParams,
    response: { 200: CaptureEnvelope, 404: NotFoundBody },
    handler: async (request) => ({
      capture: captureRecord(visible(identityOf(request), request.params.id)),
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api/captures/:id/stop',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'Stop a capture (idempotent on stopped, expired and failed)',
    params: CaptureIdParams,
    response: { 200: CaptureEnvelope, 404: NotFoundBody },
    handler: async (request) => {
      const row = visible(identityOf(request), request.params.id);
      const wasActive = row.status === 'starting' || row.status === 'running';
      const stopped = await captures.stopCapture(row.id);
      if (!stopped) throw notFound();
      // Audited when this request ended the capture; a repeated stop changes nothing and is not.
      if (wasActive)
        audited(
          ctx.db,
          ctx.clock.now(),
          actorOf(request),
          () => stopped,
          () => ({
            action: 'capture.stop',
            outcome: 'success',
            target: { type: 'capture', id: stopped.id, label: stopped.label ?? undefined },
            detail: { status: stopped.status, packets: stopped.packets, bytes: stopped.bytes },
          }),
        );
      return { capture: captureRecord(stopped) };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/api/captures/:id',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'Delete an ended capture with its chunks and file',
    params: CaptureIdParams,
    response: { 200: DeletedBody, 404: NotFoundBody, 409: StatusErrorBody },
    handler: async (request) => {
      const row = visible(identityOf(request), request.params.id);
      audited(
        ctx.db,
        ctx.clock.now(),
        actorOf(request),
        () => {
          try {
            if (!captures.remove(row.id)) throw notFound();
          } catch (err) {
            throw serviceFailure(err);
          }
        },
        () => ({
          action: 'capture.delete',
          outcome: 'success',
          target: { type: 'capture', id: row.id, label: row.label ?? undefined },
        }),
      );
      return { status: 'ok' as const };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api/captures/:id/chunks',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary:
      'pcapng blocks since a sequence number (base64); polling keeps ephemeral captures alive',
    params: CaptureIdParams,
    querystring: ChunksQuery,
    response: { 200: ChunksBody, 404: NotFoundBody },
    handler: async (request) => {
      const row = visible(identityOf(request), request.params.id);
      const since = request.query.since ?? 0;
      const { header, chunks } = captures.chunks(row, since);
      const status = captures.find(row.id)?.status ?? row.status;
      return {
        status,
        last_seq: chunks.length > 0 ? chunks[chunks.length - 1]!.seq : since,
        ...(header !== null ? { pcapng_shb: header.toString('base64') } : {}),
        chunks: chunks.map((c) => ({ seq: c.seq, data: c.data.toString('base64') })),
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api/captures/:id/download.pcapng',
    access: allOf('capture'),
    errors: ERRORS,
    tags: TAGS,
    summary: 'The complete pcapng file as an attachment',
    params: CaptureIdParams,
    produces: ['application/vnd.tcpdump.pcap', 'application/json'],
    response: {
      200: MediaBody('application/vnd.tcpdump.pcap', 'the pcapng file', {
        type: 'string',
        format: 'binary',
      } as never),
      404: NotFoundBody,
    },
    handler: async (request, reply) => {
      const row = visible(identityOf(request), request.params.id);
      const file = captures.openDownload(row.id);
      if (!file) throw notFound();
      const name = downloadName(row);
      reply
        .header('content-type', 'application/vnd.tcpdump.pcap')
        .header('content-length', String(file.size))
        .header(
          'content-disposition',
          `attachment; filename="${name.ascii}"; filename*=UTF-8''${encodeURIComponent(name.utf8)}`,
        );
      return reply.send(file.stream as never);
    },
  });
}
