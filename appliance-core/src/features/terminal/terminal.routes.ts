/**
 * The console's terminal (spec part 3, Appliance settings: the "terminal proxy", not shown there;
 * designed here). Two routes:
 *
 * - `POST /api/terminal/tickets` (`sa`): a short-lived, single-use ticket bound to the caller.
 * - `GET /api/terminal/socket?ticket=…`: the WebSocket. A browser cannot put a bearer on a
 *   WebSocket, so this route is declared public and checks its own credential before the upgrade:
 *   the ticket (unknown, reused or expired: 401), the ticket's user still holding `sa` with a live
 *   token (403 / 401), and a present `Origin` equal to the appliance's own origin (403; a missing
 *   Origin is accepted with a valid ticket: the desktop's main process sends none).
 *
 * Frames: the client sends JSON text frames `{"type":"input","data":"…"}` and
 * `{"type":"resize","cols":N,"rows":N}`; the server sends the shell's output as text frames and
 * closes the socket (1000) when the shell exits. The shell ends when the socket closes.
 * `APPLIANCE_TERMINAL=off` disables both routes (404).
 */
import websocket from '@fastify/websocket';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { CoreContext } from '../../platform/context.js';
import { failure } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, type IdentityResolver } from '../../platform/http/identity.js';
import { defineRoute, ERROR_PRESETS } from '../../platform/http/define-route.js';
import { bearerOf } from '../../platform/http/auth-hook.js';
import { identityOf } from '../../platform/http/route-config.js';
import { ErrorBody, responses } from '../../platform/http/schemas.js';
import { MAX_SESSIONS_PER_USER, TerminalSessions, type PtySpawn } from './terminal.sessions.js';
import { TICKET_TTL_MS, TicketStore } from './terminal.tickets.js';

export const TICKETS_PATH = '/api/terminal/tickets';
export const SOCKET_PATH = '/api/terminal/socket';
const TAGS = ['terminal'];
const DISABLED = 'The terminal is disabled on this appliance.';
const MAX_FRAME_BYTES = 64 * 1024;

export interface TerminalDeps {
  resolver: IdentityResolver;
  /** node-pty's spawn (loaded lazily by the feature's index). */
  spawn: PtySpawn;
}

const TicketAnswer = Type.Object({
  ticket: Type.String({ description: 'single use; valid for 30 seconds' }),
  expires_in: Type.Integer({ description: 'seconds' }),
  socket: Type.String({ description: 'the WebSocket path to open with ?ticket=' }),
});

/** The appliance's own origin as the client addressed it. */
function ownOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

function isUpgrade(request: FastifyRequest): boolean {
  return String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

interface Grant {
  user: { id: number; username: string };
}

export async function terminalRoutes(
  app: App,
  ctx: CoreContext,
  deps: TerminalDeps,
): Promise<void> {
  const enabled = ctx.config.terminal !== 'off';
  const tickets = new TicketStore(ctx.clock);
  const sessions = new TerminalSessions(deps.spawn, ctx.db, () => ctx.clock.now());
  const grants = new WeakMap<FastifyRequest, Grant>();
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });

  // spec: part3 > Appliance settings > terminal proxy (designed)
  defineRoute(app, {
    method: 'POST',
    url: TICKETS_PATH,
    access: allOf('sa'),
    errors: 'error',
    tags: TAGS,
    summary: 'Mint a single-use ticket for the terminal socket',
    description:
      'For `sa` users. The ticket is valid for 30 seconds, bound to the caller, and consumed by the first connection to GET /api/terminal/socket.',
    response: { 201: TicketAnswer, 404: ErrorBody, 409: ErrorBody },
    handler: async (request, reply) => {
      if (!enabled) throw failure(404, DISABLED);
      const identity = identityOf(request);
      if (sessions.countFor(identity.user.id) >= MAX_SESSIONS_PER_USER)
        throw failure(409, `At most ${MAX_SESSIONS_PER_USER} terminal sessions per user are open.`);
      const { ticket } = tickets.mint(identity.user.id, bearerOf(request) ?? '');
      return reply.code(201).send({
        ticket,
        expires_in: Math.round(TICKET_TTL_MS / 1000),
        socket: SOCKET_PATH,
      });
    },
  });

  /** Checks the socket's own credential before the upgrade; refusals are plain HTTP answers. */
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!enabled) throw failure(404, DISABLED);
    if (!isUpgrade(request))
      throw failure(426, 'This endpoint is a WebSocket: send an Upgrade request.');
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== ownOrigin(request))
      throw failure(403, 'Origin not allowed.');
    const ticket = (request.query as { ticket?: string }).ticket;
    if (!ticket) throw failure(401, 'A terminal ticket is required.');
    const grant = tickets.consume(ticket);
    if (!grant) throw failure(401, 'The terminal ticket is invalid, used or expired.');
    const identity = deps.resolver.fromBearer(grant.bearer);
    if (!identity || identity.user.id !== grant.userId)
      throw failure(401, 'The session that asked for this ticket has ended.');
    if (!identity.permissions.has('sa')) throw failure(403, 'The terminal is for sa users only.');
    if (sessions.countFor(identity.user.id) >= MAX_SESSIONS_PER_USER)
      throw failure(409, `At most ${MAX_SESSIONS_PER_USER} terminal sessions per user are open.`);
    grants.set(request, { user: { id: identity.user.id, username: identity.user.username } });
    void reply;
  };

  app.route({
    method: 'GET',
    url: SOCKET_PATH,
    config: { access: { kind: 'public' }, errors: ERROR_PRESETS.error },
    schema: {
      tags: TAGS,
      summary: 'The terminal WebSocket (answers 101 Switching Protocols)',
      description:
        'Public route: its credential is the `ticket` from POST /api/terminal/tickets (single use, 30 s). A present Origin must equal the appliance origin. Client frames: JSON `{"type":"input","data":"…"}` and `{"type":"resize","cols":N,"rows":N}`; server frames: the shell output as text. The shell ends when the socket closes.',
      querystring: Type.Object({ ticket: Type.Optional(Type.String({ maxLength: 200 })) }),
      response: responses(
        ERROR_PRESETS.error,
        {
          101: Type.Null({ description: 'Switching Protocols: the terminal session' }),
          401: ErrorBody,
          403: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          426: ErrorBody,
        },
        { authenticated: false },
      ),
    },
    preValidation: admit,
    // A plain GET never gets here (admit answers 426); declared with wsHandler rather than
    // `websocket: true` so that /openapi.json documents the route.
    handler: (_request: FastifyRequest, reply: FastifyReply) =>
      reply.code(426).send({ error: 'This endpoint is a WebSocket: send an Upgrade request.' }),
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const grant = grants.get(request);
      if (!grant) {
        socket.close(1008, 'not admitted');
        return;
      }
      const session = sessions.open(grant.user, request.ip, { cols: 80, rows: 24 });
      if (!session) {
        socket.close(1013, 'too many sessions');
        return;
      }
      const { pty, close } = session;
      const output = pty.onData((data) => {
        if (socket.readyState === socket.OPEN) socket.send(data);
      });
      const exit = pty.onExit(({ exitCode }) => {
        close('shell exited');
        if (socket.readyState === socket.OPEN) socket.close(1000, `shell exited (${exitCode})`);
      });
      socket.on('message', (raw: Buffer, isBinary: boolean) => {
        if (isBinary) return;
        let frame: { type?: unknown; data?: unknown; cols?: unknown; rows?: unknown };
        try {
          frame = JSON.parse(raw.toString('utf8')) as typeof frame;
        } catch {
          return;
        }
        if (frame.type === 'input' && typeof frame.data === 'string') pty.write(frame.data);
        else if (
          frame.type === 'resize' &&
          Number.isInteger(frame.cols) &&
          Number.isInteger(frame.rows)
        ) {
          const cols = Math.min(500, Math.max(2, frame.cols as number));
          const rows = Math.min(200, Math.max(2, frame.rows as number));
          pty.resize(cols, rows);
        }
      });
      socket.on('close', () => {
        output.dispose();
        exit.dispose();
        close('socket closed');
      });
      socket.on('error', () => close('socket error'));
    },
  } as never);
}
