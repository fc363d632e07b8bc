// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.js';
import { openEventStream, parseEventStream, type ServerEvent } from './event-stream.js';
import { useSession } from './session.js';
import { setTransport } from './transport.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
}

async function collect(stream: AsyncGenerator<ServerEvent>): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('SSE reader', () => {
  it('yields frames as they complete, whatever the chunk boundaries', async () => {
    const events = await collect(
      parseEventStream(
        streamOf([
          ': stream open\n\n',
          'data: {"icmp_seq":1,"lat',
          'ency":0.04}\n',
          '\ndata: {"icmp_seq":2}\r\n\r\n',
          'event: error\ndata: {"message":"no route"}\n\n',
          'event: stream-complete\ndata: {}\n\n',
          'data: line one\ndata: line two\n\n',
        ]),
      ),
    );
    expect(events).toEqual([
      { event: 'message', data: '{"icmp_seq":1,"latency":0.04}' },
      { event: 'message', data: '{"icmp_seq":2}' },
      { event: 'error', data: '{"message":"no route"}' },
      { event: 'stream-complete', data: '{}' },
      { event: 'message', data: 'line one\nline two' },
    ]);
  });

  it('yields the first frame before the stream has ended', async () => {
    let push: (text: string) => void = () => {};
    let end: () => void = () => {};
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (t) => controller.enqueue(new TextEncoder().encode(t));
        end = () => controller.close();
      },
    });
    const reader = parseEventStream(stream);
    push('data: 1\n\n');
    const first = await reader.next();
    expect(first.value).toEqual({ event: 'message', data: '1' });
    push('data: 2\n\n');
    end();
    expect((await reader.next()).value).toEqual({ event: 'message', data: '2' });
    expect((await reader.next()).done).toBe(true);
  });

  it('turns a refused stream into the API error, with the bearer sent', async () => {
    useSession.getState().signIn('tok-sse', { id: 2, email: 'b@x', name: 'B' });
    let auth: string | null = null;
    setTransport({
      base: '',
      holdsToken: false,
      fetch: async (url, init) => {
        if (url === '/api/me')
          return new Response('{"id":2}', {
            status: 200,
            headers: { 'content-type': 'application/json' },
          });
        auth = new Headers(init.headers).get('authorization');
        return new Response(
          JSON.stringify({
            status: false,
            hasError: true,
            message: 'You do not have permission to perform this action.',
          }),
          {
            status: 401,
            headers: { 'content-type': 'application/json' },
          },
        );
      },
      openSocket: () => {
        throw new Error('no');
      },
    });
    const err = await collect(openEventStream('/api/SSEgetPingInfo/127.0.0.1')).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ kind: 'denied' });
    expect(auth).toBe('Bearer tok-sse');
    useSession.getState().signOut();
  });
});
