/**
 * Internet speed test against a configurable HTTP(S) server (APPLIANCE_SPEEDTEST_URL).
 *
 * Protocol (the one speed.cloudflare.com serves, simple enough to host anywhere):
 * - `GET  <base>/__down?bytes=N` answers exactly N bytes;
 * - `POST <base>/__up` accepts a body of any size and answers 2xx.
 * Latency is the median round trip of small `__down?bytes=0` requests (the first, which opens the
 * connection, is not counted); jitter is the mean difference between consecutive round trips.
 * Download: parallel `__down` transfers for a fixed time, every byte counted as it arrives.
 * Upload: parallel `__up` posts for a fixed time, counted when the server confirms them; the size
 * of each post grows from 64 KiB while posts finish quickly, so slow links still complete some.
 */
import { performance } from 'node:perf_hooks';
import { toIso } from '../../platform/time/time.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import type { SpeedTestResult } from './tools.schema.js';
import type { SpeedTestOptions } from './tools.runtime.js';

/*
 * Failures are ToolFailures: the server could not be reached or refused the test (HTTP 500
 * `{message}`, the route's family), or it answered but not in the protocol's terms
 * (SpeedTestProtocolError).
 */

/** The server answered, but not in the protocol's terms (HTTP 500 `{status: false, message}`). */
export class SpeedTestProtocolError extends ToolFailure {
  constructor(message: string) {
    super(message, { family: 'statusMessage' });
  }
}

const FIRST_UPLOAD_BYTES = 64 * 1024;
const QUICK_REQUEST_MS = 500;

function baseOf(url: string): string {
  return url.replace(/\/+$/, '');
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

async function request(url: string, init: RequestInit, what: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error' });
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw new ToolFailure(`Speed test server unreachable (${what}): ${describe(err)}`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new ToolFailure(`Speed test server answered HTTP ${response.status} (${what})`);
  }
  return response;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function measureLatency(
  base: string,
  options: SpeedTestOptions,
  signal: AbortSignal,
): Promise<{ ping: number; jitter: number }> {
  const samples: number[] = [];
  for (let i = 0; i < options.latencySamples + 1; i++) {
    const t0 = performance.now();
    const response = await request(
      `${base}/__down?bytes=0`,
      { signal: AbortSignal.any([signal, AbortSignal.timeout(options.requestTimeoutMs)]) },
      'latency',
    );
    const body = await response.arrayBuffer();
    if (body.byteLength !== 0)
      throw new SpeedTestProtocolError(
        `Speed test server sent ${body.byteLength} bytes for a 0-byte request: not a speed test server`,
      );
    if (i > 0) samples.push(performance.now() - t0);
  }
  const jitter =
    samples.length > 1
      ? samples.slice(1).reduce((sum, v, i) => sum + Math.abs(v - (samples[i] as number)), 0) /
        (samples.length - 1)
      : 0;
  return { ping: round2(median(samples)), jitter: round2(jitter) };
}

async function measureDownload(
  base: string,
  options: SpeedTestOptions,
  signal: AbortSignal,
): Promise<{ bytes: number; seconds: number }> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), options.durationMs);
  const both = AbortSignal.any([signal, stop.signal]);
  const start = performance.now();
  let bytes = 0;
  const worker = async () => {
    while (!both.aborted) {
      let received = 0;
      try {
        const response = await request(
          `${base}/__down?bytes=${options.downloadChunkBytes}`,
          { signal: both },
          'download',
        );
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          received += value.byteLength;
          bytes += value.byteLength;
        }
      } catch (err) {
        if (both.aborted) return;
        throw err;
      }
      if (received !== options.downloadChunkBytes) {
        throw new SpeedTestProtocolError(
          `Speed test server sent ${received} bytes where ${options.downloadChunkBytes} were asked for: not a speed test server`,
        );
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.streams }, worker));
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  return { bytes, seconds: (performance.now() - start) / 1000 };
}

async function measureUpload(
  base: string,
  options: SpeedTestOptions,
  signal: AbortSignal,
): Promise<{ bytes: number; seconds: number }> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), options.durationMs);
  const both = AbortSignal.any([signal, stop.signal]);
  const payload = Buffer.alloc(options.uploadChunkBytes, 0x5a);
  const start = performance.now();
  let bytes = 0;
  const worker = async () => {
    let size = Math.min(FIRST_UPLOAD_BYTES, options.uploadChunkBytes);
    while (!both.aborted) {
      const t0 = performance.now();
      try {
        const response = await request(
          `${base}/__up`,
          {
            method: 'POST',
            body: payload.subarray(0, size),
            headers: { 'content-type': 'application/octet-stream' },
            signal: both,
          },
          'upload',
        );
        await response.arrayBuffer();
      } catch (err) {
        if (both.aborted) return;
        throw err;
      }
      bytes += size;
      if (performance.now() - t0 < QUICK_REQUEST_MS)
        size = Math.min(size * 2, options.uploadChunkBytes);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.streams }, worker));
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  return { bytes, seconds: (performance.now() - start) / 1000 };
}

/** Runs the whole test; throws a ToolFailure (a SpeedTestProtocolError for a server that is not one). */
export async function runSpeedTest(
  options: SpeedTestOptions,
  now: () => number,
  signal: AbortSignal,
): Promise<SpeedTestResult> {
  const base = baseOf(options.url);
  let latency: { ping: number; jitter: number };
  let down: { bytes: number; seconds: number };
  let up: { bytes: number; seconds: number };
  try {
    latency = await measureLatency(base, options, signal);
    down = await measureDownload(base, options, signal);
    up = await measureUpload(base, options, signal);
  } catch (err) {
    if (signal.aborted) throw new ToolFailure('Speed test cancelled');
    throw err;
  }
  if (signal.aborted) throw new ToolFailure('Speed test cancelled');
  return {
    server: base,
    ping: latency.ping,
    jitter: latency.jitter,
    download: Math.round((down.bytes * 8) / Math.max(down.seconds, 0.001)),
    upload: Math.round((up.bytes * 8) / Math.max(up.seconds, 0.001)),
    bytes_received: down.bytes,
    bytes_sent: up.bytes,
    timestamp: toIso(now()),
  };
}
