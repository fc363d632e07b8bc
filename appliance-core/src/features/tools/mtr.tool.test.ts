import { describe, expect, it } from 'vitest';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import { runEventStream } from '../../platform/http/define-route.js';
import type { EventStream } from '../../platform/http/sse.js';
import { mtrArgs, MTR_STREAM_END, parseMtrLine, streamMtr } from './mtr.tool.js';
import { recordingStream, ScriptedRunner } from './testing/scripted-runner.js';

describe('mtr --raw lines', () => {
  it('turns x, h and p lines into sent, host and reply frames with hops counted from 1', () => {
    expect(parseMtrLine('x 0 33000')).toEqual({ type: 'sent', hop: 1 });
    expect(parseMtrLine('h 0 127.0.0.1')).toEqual({ type: 'host', hop: 1, host: '127.0.0.1' });
    expect(parseMtrLine('h 4 2001:db8::1')).toEqual({ type: 'host', hop: 5, host: '2001:db8::1' });
    expect(parseMtrLine('p 0 56 33000')).toEqual({ type: 'reply', hop: 1, latency: 0.056 });
    expect(parseMtrLine('p 2 12345 33002')).toEqual({ type: 'reply', hop: 3, latency: 12.345 });
  });

  it('ignores name lines and anything else', () => {
    expect(parseMtrLine('d 0 localhost')).toBeNull();
    expect(parseMtrLine('')).toBeNull();
    expect(parseMtrLine('x')).toBeNull();
    expect(parseMtrLine('p -1 5 1')).toBeNull();
    expect(parseMtrLine('p 0 abc 1')).toBeNull();
    expect(parseMtrLine('mtr: Failed to resolve host')).toBeNull();
  });

  it('builds the argument list: numeric, raw, 10 cycles, target after --', () => {
    expect(mtrArgs(parseTarget('::1') as Target, 1, 2)).toEqual([
      '-n',
      '--raw',
      '-c',
      '10',
      '-i',
      '1',
      '-G',
      '2',
      '--',
      '::1',
    ]);
  });
});

describe('mtr tool outcomes', () => {
  const target = parseTarget('192.0.2.1') as Target;
  /** As the route runs it: failures reported by the one event-stream helper, then the end frame. */
  const run = (runner: ScriptedRunner, stream: EventStream) =>
    runEventStream(stream, () => streamMtr(runner, target, stream), { last: MTR_STREAM_END });

  it('streams frames, one host frame per hop and address, then stream-complete', async () => {
    const { stream, frames, isClosed } = recordingStream();
    const lines = [
      'x 0 33000',
      'h 0 192.0.2.254',
      'h 0 192.0.2.254',
      'p 0 1500 33000',
      'x 1 33001',
      'h 1 192.0.2.1',
      'h 1 192.0.2.77',
      'd 1 example',
      'x 0 33002',
    ];
    await run(new ScriptedRunner({ lines }), stream);
    expect(frames).toEqual([
      { data: { type: 'sent', hop: 1 }, event: undefined },
      { data: { type: 'host', hop: 1, host: '192.0.2.254' }, event: undefined },
      { data: { type: 'reply', hop: 1, latency: 1.5 }, event: undefined },
      { data: { type: 'sent', hop: 2 }, event: undefined },
      { data: { type: 'host', hop: 2, host: '192.0.2.1' }, event: undefined },
      { data: { type: 'host', hop: 2, host: '192.0.2.77' }, event: undefined },
      { data: { type: 'sent', hop: 1 }, event: undefined },
      { data: {}, event: 'stream-complete' },
    ]);
    expect(isClosed()).toBe(true);
  });

  it('sends the error event before stream-complete when mtr fails', async () => {
    const { stream, frames } = recordingStream();
    await run(
      new ScriptedRunner({
        code: 1,
        stderr: 'mtr: Failed to resolve host: nowhere.example: Name or service not known\n',
      }),
      stream,
    );
    expect(frames).toEqual([
      {
        data: {
          message: 'mtr: Failed to resolve host: nowhere.example: Name or service not known',
        },
        event: 'error',
      },
      { data: {}, event: 'stream-complete' },
    ]);
  });

  it('treats a run past its time limit as a failure, after the frames it produced', async () => {
    const { stream, frames } = recordingStream();
    await run(
      new ScriptedRunner({ code: null, signal: 'SIGTERM', timedOut: true, lines: ['x 0 1'] }),
      stream,
    );
    expect(frames.map((f) => f.event)).toEqual([undefined, 'error', 'stream-complete']);
    expect(frames[1]!.data).toEqual({
      message: expect.stringMatching(/^mtr did not finish within \d+ seconds$/),
    });
  });
});
