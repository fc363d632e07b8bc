import http from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream, type EventStream } from './sse.js';

let app: FastifyInstance;
let base: string;
const streams: EventStream[] = [];

beforeAll(async () => {
  app = Fastify();
  app.get('/three', async (_request, reply) => {
    const stream = openEventStream(reply, { heartbeatMs: 0 });
    let i = 0;
    const timer = setInterval(() => {
      i++;
      if (i <= 3) stream.send({ n: i });
      if (i === 3) {
        stream.send({ message: 'named' }, 'stream-complete');
        clearInterval(timer);
        stream.close();
      }
    }, 100);
    return reply;
  });
  app.get('/endless', async (_request, reply) => {
    const stream = openEventStream(reply, { heartbeatMs: 50 });
    streams.push(stream);
    const timer = setInterval(() => stream.send({ tick: Date.now() }), 100);
    stream.signal.addEventListener('abort', () => clearInterval(timer));
    return reply;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(() => app.close());

interface Chunk {
  text: string;
  at: number;
}

function get(path: string, onChunk?: (chunk: Chunk, request: http.ClientRequest) => void) {
  return new Promise<{
    status: number;
    headers: http.IncomingHttpHeaders;
    chunks: Chunk[];
    endedAt: number;
  }>((resolve, reject) => {
    const chunks: Chunk[] = [];
    const request = http.get(`${base}${path}`, (res) => {
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        const chunk = { text, at: Date.now() };
        chunks.push(chunk);
        onChunk?.(chunk, request);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, endedAt: Date.now() }),
      );
      res.on('error', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, endedAt: Date.now() }),
      );
    });
    request.on('error', (err) =>
      chunks.length > 0
        ? resolve({ status: 200, headers: {}, chunks, endedAt: Date.now() })
        : reject(err),
    );
  });
}

describe('openEventStream', () => {
  it('answers text/event-stream with data frames as they happen, named events, then ends', async () => {
    const res = await get('/three');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    const text = res.chunks.map((c) => c.text).join('');
    expect(text).toBe(
      ': stream open\n\ndata: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\nevent: stream-complete\ndata: {"message":"named"}\n\n',
    );
    const first = res.chunks.find((c) => c.text.includes('"n":1'));
    expect(first).toBeDefined();
    expect(first!.at).toBeLessThan(res.endedAt);
    expect(res.chunks.filter((c) => c.text.includes('data:')).length).toBeGreaterThan(1);
  });

  it('sends heartbeats and aborts its signal within a second of the client leaving', async () => {
    let closedAt = 0;
    await get('/endless', (chunk, request) => {
      if (chunk.text.includes('"tick"') && closedAt === 0) {
        closedAt = Date.now();
        request.destroy();
      }
    });
    expect(closedAt).toBeGreaterThan(0);
    const stream = streams.at(-1)!;
    const deadline = Date.now() + 1000;
    while (!stream.signal.aborted && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(stream.signal.aborted).toBe(true);
    expect(stream.closed).toBe(true);
    expect(() => stream.send({ late: true })).not.toThrow();
  });

  it('writes keep-alive comments between frames', async () => {
    let seen = '';
    await get('/endless', (chunk, request) => {
      seen += chunk.text;
      if ((seen.match(/"tick"/g) ?? []).length >= 2) request.destroy();
    });
    expect(seen).toContain(': keep-alive\n\n');
  });
});
