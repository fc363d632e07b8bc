/**
 * Server-sent events (spec part 1, General conventions 9): `text/event-stream`, one `data:` frame
 * per result, named events where an endpoint lists them, and the stream ends when the work ends.
 *
 * Invariant: the stream's AbortSignal fires as soon as the client goes away (or the stream is
 * closed), so work tied to it, a child process above all, ends with the request.
 */
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /** Aborted when the client disconnects or the stream is closed. */
  readonly signal: AbortSignal;
  readonly closed: boolean;
  /** Sends one frame: `event: <event>` when named, then `data: <JSON>`. */
  send(data: unknown, event?: string): void;
  /** Ends the stream (idempotent). */
  close(): void;
}

export interface EventStreamOptions {
  /** Comment lines sent this often keep idle proxies from closing the stream (0 disables). */
  heartbeatMs?: number;
}

const EVENT_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
const DEFAULT_HEARTBEAT_MS = 15_000;

/** Starts an event stream as the reply to this request. The handler returns `reply` afterwards. */
export function openEventStream(
  reply: FastifyReply,
  options: EventStreamOptions = {},
): EventStream {
  const body = new PassThrough();
  const controller = new AbortController();
  let closed = false;
  let heartbeat: NodeJS.Timeout | null = null;

  const close = () => {
    if (closed) return;
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    body.end();
    controller.abort();
  };

  const onGone = () => {
    if (closed) return;
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    controller.abort();
    body.destroy();
  };
  reply.raw.once('close', onGone);

  reply
    .code(200)
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-accel-buffering', 'no');
  void reply.send(body);
  // A first comment line makes the headers leave at once, before the first result.
  body.write(': stream open\n\n');

  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  if (heartbeatMs > 0) {
    heartbeat = setInterval(() => {
      if (!closed) body.write(': keep-alive\n\n');
    }, heartbeatMs);
    heartbeat.unref();
  }

  return {
    signal: controller.signal,
    get closed() {
      return closed;
    },
    send(data: unknown, event?: string) {
      if (closed) return;
      if (event !== undefined && !EVENT_NAME.test(event))
        throw new Error(`invalid event name ${event}`);
      body.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    },
    close,
  };
}

/**
 * For blocking (non-streaming) work: aborted when the client closes the connection before the
 * answer was sent, so a cancelled request ends its child process too.
 */
export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
