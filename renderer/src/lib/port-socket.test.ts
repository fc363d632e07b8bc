// The terminal's socket over a real MessageChannel (Node's, the same API as the browser's).
import { afterEach, describe, expect, it } from 'vitest';

import { createPortSocket, ptyMessageOf } from './port-socket.js';

const channels: MessageChannel[] = [];
function channel() {
  const c = new MessageChannel();
  channels.push(c);
  const fromPage: unknown[] = [];
  c.port2.onmessage = (event) => fromPage.push(event.data);
  return { page: c.port1, main: c.port2, fromPage };
}
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('port socket', () => {
  it('socket sessions: open first, frames verbatim both ways, closed with its code', async () => {
    const { page, main, fromPage } = channel();
    const socket = createPortSocket();
    const events: string[] = [];
    socket.onopen = () => events.push('open');
    socket.onmessage = (event) => events.push(`message:${String(event.data)}`);
    socket.onclose = (event) => events.push(`close:${event.code}:${event.reason}`);
    socket.send('dropped while connecting');
    socket.attach(page, 'socket');
    main.postMessage({ type: 'open' });
    main.postMessage({ type: 'message', data: 'hello' });
    await tick();
    expect(socket.readyState).toBe(1);
    socket.send('{"type":"input","data":"ls\\n"}');
    await tick();
    expect(fromPage).toEqual([{ type: 'send', data: '{"type":"input","data":"ls\\n"}' }]);
    main.postMessage({ type: 'closed', code: 4001, reason: 'ticket used' });
    await tick();
    expect(events).toEqual(['open', 'message:hello', 'close:4001:ticket used']);
    expect(socket.readyState).toBe(3);
  });

  it('pty sessions: open at once, JSON frames become contract messages, exit closes', async () => {
    const { page, main, fromPage } = channel();
    const socket = createPortSocket();
    const events: string[] = [];
    socket.onopen = () => events.push('open');
    socket.onmessage = (event) => events.push(`out:${String(event.data)}`);
    socket.onclose = (event) => events.push(`close:${event.reason}`);
    socket.attach(page, 'pty');
    expect(socket.readyState).toBe(1);
    socket.send(JSON.stringify({ type: 'input', data: 'echo hi\r' }));
    socket.send(JSON.stringify({ type: 'resize', cols: 100, rows: 30 }));
    socket.send(JSON.stringify({ type: 'resize', cols: 100000, rows: 30 }));
    socket.send('not json');
    main.postMessage({ type: 'output', data: 'hi' });
    main.postMessage({ type: 'exit', exitCode: 0, signal: null });
    await tick();
    expect(fromPage).toEqual([
      { type: 'input', data: 'echo hi\r' },
      { type: 'resize', cols: 100, rows: 30 },
    ]);
    expect(events).toEqual(['open', 'out:hi', 'close:the shell exited with code 0']);
  });

  it('closing from the page tells main; a port arriving after close ends its session', async () => {
    const first = channel();
    const socket = createPortSocket();
    socket.attach(first.page, 'socket');
    first.main.postMessage({ type: 'open' });
    await tick();
    socket.close(1000, 'bye');
    await tick();
    expect(first.fromPage).toEqual([{ type: 'close', code: 1000, reason: 'bye' }]);

    const late = channel();
    const gone = createPortSocket();
    gone.close();
    gone.attach(late.page, 'pty');
    await tick();
    expect(late.fromPage).toEqual([{ type: 'close' }]);
  });

  it('a failed opening reports the error and closes', () => {
    const socket = createPortSocket();
    const events: string[] = [];
    socket.onerror = () => events.push('error');
    socket.onclose = (event) => events.push(`close:${event.code}:${event.reason}`);
    socket.fail('the appliance refused the terminal (HTTP 401)');
    expect(events).toEqual(['error', 'close:1011:the appliance refused the terminal (HTTP 401)']);
  });

  it('ptyMessageOf keeps to the contract', () => {
    expect(ptyMessageOf('{"type":"input","data":"x"}')).toEqual({ type: 'input', data: 'x' });
    expect(ptyMessageOf('{"type":"resize","cols":1,"rows":1}')).toBeNull();
    expect(ptyMessageOf('{"type":"close"}')).toBeNull();
    expect(ptyMessageOf('[]')).toBeNull();
  });
});
