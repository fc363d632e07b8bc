/**
 * Server-sent events read with fetch and a stream reader: an EventSource cannot send the bearer
 * token (spec part 1, General conventions 9: one `data:` frame per result, named events where an
 * endpoint lists them, the stream ends when the command ends).
 */
import { authHeaders, buildUrl, classifyUnauthorized } from './api-client.js';
import { ApiError, failureOf } from './api-error.js';
import { getTransport } from './transport.js';

export interface ServerEvent {
  /** `message` when the frame names no event. */
  event: string;
  data: string;
}

/** Parses an event stream into events as its bytes arrive (frames may split anywhere). */
export async function* parseEventStream(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (done) {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Opens an event stream of the API and yields its events until it ends or `signal` aborts. A
 * refusal (non-stream answer) throws the same ApiError as any other request.
 */
export async function* openEventStream(
  path: string,
  signal?: AbortSignal,
): AsyncGenerator<ServerEvent> {
  let response: Response;
  try {
    response = await getTransport().fetch(buildUrl(path), {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...authHeaders() },
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') return;
    throw new ApiError('network', 0, 'The appliance did not answer. Check the connection.');
  }
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream') || !response.body) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text itself is the message
    }
    const failure =
      failureOf(response.status, body) ??
      new ApiError('http', response.status, 'The appliance did not open an event stream.');
    if (response.status === 401) throw await classifyUnauthorized(failure);
    throw failure;
  }
  try {
    yield* parseEventStream(response.body);
  } catch (err) {
    if ((err as Error).name === 'AbortError' || signal?.aborted) return;
    throw err;
  }
}
