import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { buildCore } from '../../test/harness/build-core.js';
import { SERVER } from '../../test/harness/process.js';

import {
  CoreSupervisor,
  CoreSupervisorError,
  isCoreReadyMessage,
  type CoreForkOptions,
  type CoreSupervisorEvent,
  type CoreSupervisorOptions,
  type SupervisorClock,
} from './core-supervisor.js';

/** A clock whose time moves only when the test says so; due callbacks run in time order. */
class ManualClock implements SupervisorClock {
  private time = 0;
  private sequence = 0;
  private timers: Array<{ at: number; order: number; callback: () => void }> = [];

  now(): number {
    return this.time;
  }

  schedule(callback: () => void, delayMs: number) {
    const timer = { at: this.time + delayMs, order: this.sequence++, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((pending) => pending !== timer);
    };
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers
        .filter((timer) => timer.at <= end)
        .sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = due.at;
      due.callback();
    }
    this.time = end;
  }
}

const FINGERPRINT = Array.from({ length: 32 }, (_, i) =>
  (i * 7).toString(16).padStart(2, '0').toUpperCase(),
).join(':');

/** Stands in for Electron's UtilityProcess: the test makes it post messages and exit. */
class FakeCoreProcess extends EventEmitter {
  killed = false;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();

  constructor(readonly exitWhenKilled: boolean) {
    super();
  }

  kill(): boolean {
    this.killed = true;
    if (this.exitWhenKilled) queueMicrotask(() => this.emit('exit', 0));
    return true;
  }

  ready(url: string): void {
    this.emit('message', { type: 'ready', url, certSha256: FINGERPRINT, ports: {} });
  }

  exit(code: number): void {
    this.emit('exit', code);
  }
}

interface ForkCall {
  modulePath: string;
  args: string[];
  options: CoreForkOptions;
}

function setup(overrides: Partial<CoreSupervisorOptions> = {}) {
  const clock = new ManualClock();
  const children: FakeCoreProcess[] = [];
  const forkCalls: ForkCall[] = [];
  const events: CoreSupervisorEvent[] = [];
  const supervisor = new CoreSupervisor({
    modulePath: '/app/appliance-core/dist/server.js',
    args: ['--log-level', 'info'],
    forkOptions: { env: { APPLIANCE_HTTPS_PORT: '0' }, serviceName: 'Appliance core' },
    fork: (modulePath, args, options) => {
      forkCalls.push({ modulePath, args, options });
      const child = new FakeCoreProcess(true);
      children.push(child);
      return child;
    },
    clock,
    initialRestartDelayMs: 1_000,
    maxRestartDelayMs: 30_000,
    maxFailures: 4,
    failureWindowMs: 60_000,
    readyTimeoutMs: 20_000,
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  const latest = (): FakeCoreProcess => {
    const child = children.at(-1);
    if (!child) throw new Error('no child forked yet');
    return child;
  };
  return { clock, children, forkCalls, events, supervisor, latest };
}

describe('CoreSupervisor', () => {
  it('forks the core and resolves with the URL from its ready message', async () => {
    const { supervisor, forkCalls, latest, events } = setup();

    const started = supervisor.start();
    expect(supervisor.state).toBe('starting');
    expect(forkCalls).toEqual([
      {
        modulePath: '/app/appliance-core/dist/server.js',
        args: ['--log-level', 'info'],
        options: { env: { APPLIANCE_HTTPS_PORT: '0' }, serviceName: 'Appliance core' },
      },
    ]);

    // Anything but a well-formed ready message is not readiness.
    latest().emit('message', { type: 'log', line: 'migrating' });
    latest().emit('message', { type: 'ready', url: 'not a url' });
    latest().emit('message', { type: 'ready' });
    expect(supervisor.state).toBe('starting');

    latest().ready('https://127.0.0.1:40123');
    await expect(started).resolves.toMatchObject({ url: 'https://127.0.0.1:40123' });
    expect(supervisor.state).toBe('ready');
    await expect(supervisor.whenReady()).resolves.toMatchObject({ url: 'https://127.0.0.1:40123' });
    expect(events).toEqual([
      { type: 'ready', url: 'https://127.0.0.1:40123', certSha256: FINGERPRINT, ports: {} },
    ]);
  });

  it('accepts the ready message the real appliance-core/dist/server.js posts', async () => {
    // The message comes from the real server (forked with an IPC channel, as utilityProcess.fork
    // gives it one), not from a copy of its shape in this file.
    buildCore();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-ready-'));
    const child = fork(SERVER, [], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        APPLIANCE_DATA_DIR: dataDir,
        APPLIANCE_BIND: '127.0.0.1',
        APPLIANCE_HTTPS_PORT: '0',
        APPLIANCE_SYSLOG_PORT: '0',
        APPLIANCE_NETFLOW_PORT: '0',
        APPLIANCE_ADMIN_PASSWORD: 'Ready-Passw0rd',
        APPLIANCE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    let real: unknown;
    try {
      real = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no ready message within 30 s')), 30_000);
        child.on('message', (message) => {
          clearTimeout(timer);
          resolve(message);
        });
        child.on('exit', (code) => reject(new Error(`server exited with ${code} before ready`)));
      });
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(null) : child.once('exit', resolve),
      );
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(isCoreReadyMessage(real)).toBe(true);
    const { supervisor, latest } = setup();
    const started = supervisor.start();
    latest().emit('message', real);
    const { type: _type, ...ready } = real as Record<string, unknown>;
    await expect(started).resolves.toEqual(ready);
    expect(supervisor.state).toBe('ready');
  }, 60_000);

  it('refuses to be started twice', async () => {
    const { supervisor, latest } = setup();
    const started = supervisor.start();
    expect(() => supervisor.start()).toThrow(/already started/);
    latest().ready('https://127.0.0.1:1');
    await started;
  });

  it('restarts after an exit with a delay that doubles per failure, up to the cap', async () => {
    const { supervisor, clock, children, latest, events } = setup({
      maxFailures: 10,
      maxRestartDelayMs: 4_000,
    });
    const started = supervisor.start();
    latest().ready('https://127.0.0.1:40001');
    await started;

    latest().exit(1);
    expect(supervisor.state).toBe('waiting-to-restart');
    const waiting = supervisor.whenReady();
    clock.advance(999);
    expect(children).toHaveLength(1);
    clock.advance(1);
    expect(children).toHaveLength(2);

    // Fails again before ready: 2 s, then 4 s, then capped at 4 s.
    latest().exit(1);
    clock.advance(1_999);
    expect(children).toHaveLength(2);
    clock.advance(1);
    expect(children).toHaveLength(3);
    latest().exit(1);
    clock.advance(4_000);
    expect(children).toHaveLength(4);
    latest().exit(1);
    clock.advance(3_999);
    expect(children).toHaveLength(4);
    clock.advance(1);
    expect(children).toHaveLength(5);

    latest().ready('https://127.0.0.1:40002');
    await expect(waiting).resolves.toMatchObject({ url: 'https://127.0.0.1:40002' });
    expect(supervisor.state).toBe('ready');
    expect(
      events.filter((event) => event.type === 'restarting').map((event) => event.delayMs),
    ).toEqual([1_000, 2_000, 4_000, 4_000]);
    expect(events).toContainEqual({
      type: 'restarting',
      delayMs: 2_000,
      failures: 2,
      reason: 'it exited with code 1 before it was ready',
    });
  });

  it('ignores events from a child it has already replaced', async () => {
    const { supervisor, clock, children, latest } = setup();
    const started = supervisor.start();
    const first = latest();
    first.ready('https://127.0.0.1:40001');
    await started;
    first.exit(1);
    clock.advance(1_000);
    expect(children).toHaveLength(2);

    first.exit(1);
    first.ready('https://127.0.0.1:49999');
    expect(supervisor.state).toBe('starting');
    latest().ready('https://127.0.0.1:40002');
    await expect(supervisor.whenReady()).resolves.toMatchObject({ url: 'https://127.0.0.1:40002' });
  });

  it('gives up after maxFailures within the window and reports why', async () => {
    const { supervisor, clock, children, latest, events } = setup({ maxFailures: 3 });
    const started = supervisor.start();

    latest().exit(3);
    clock.advance(1_000);
    latest().exit(3);
    clock.advance(2_000);
    latest().exit(78);

    await expect(started).rejects.toBeInstanceOf(CoreSupervisorError);
    await expect(started).rejects.toThrow(
      'the appliance core failed 3 times within 60 s and was not restarted again; ' +
        'last: it exited with code 78 before it was ready',
    );
    expect(supervisor.state).toBe('failed');
    await expect(supervisor.whenReady()).rejects.toThrow(/failed 3 times/);
    expect(events.at(-1)).toMatchObject({ type: 'failed' });

    clock.advance(10 * 60_000);
    expect(children).toHaveLength(3);
  });

  it('does not count failures that fell out of the window', async () => {
    const { supervisor, clock, children, latest } = setup({ maxFailures: 3 });
    const started = supervisor.start();
    latest().ready('https://127.0.0.1:40001');
    await started;

    for (let round = 0; round < 5; round++) {
      latest().exit(1);
      clock.advance(1_000);
      latest().ready('https://127.0.0.1:40001');
      clock.advance(60_000);
    }
    expect(supervisor.state).toBe('ready');
    expect(children).toHaveLength(6);
  });

  it('stops a child that never becomes ready and starts a new one', () => {
    const { supervisor, clock, children, latest, events } = setup();
    void supervisor.start().catch(() => undefined);
    const silent = latest();

    clock.advance(20_000);
    expect(silent.killed).toBe(true);
    expect(events).toContainEqual({
      type: 'restarting',
      delayMs: 1_000,
      failures: 1,
      reason: 'it was not ready within 20 s',
    });
    clock.advance(1_000);
    expect(children).toHaveLength(2);
  });

  it('counts a fork that throws as a failure', async () => {
    let attempts = 0;
    const { supervisor, clock } = setup({
      maxFailures: 2,
      fork: () => {
        attempts++;
        throw new Error('spawn EACCES');
      },
    });
    const started = supervisor.start();
    clock.advance(1_000);
    await expect(started).rejects.toThrow(/last: it could not be started: spawn EACCES/);
    expect(attempts).toBe(2);
  });

  it('stop() kills the child, waits for its exit and does not restart it', async () => {
    const { supervisor, clock, children, latest } = setup();
    const started = supervisor.start();
    latest().ready('https://127.0.0.1:40001');
    await started;

    await supervisor.stop();
    expect(latest().killed).toBe(true);
    expect(supervisor.state).toBe('stopped');
    clock.advance(60_000);
    expect(children).toHaveLength(1);
    await expect(supervisor.whenReady()).rejects.toThrow(/stopped/);
  });

  it('stop() gives up waiting for a child that does not exit', async () => {
    const clock = new ManualClock();
    const stubborn = new FakeCoreProcess(false);
    const supervisor = new CoreSupervisor({
      modulePath: 'server.js',
      fork: () => stubborn,
      clock,
      stopTimeoutMs: 6_000,
    });
    const started = supervisor.start();
    stubborn.ready('https://127.0.0.1:40001');
    await started;

    let stopped = false;
    const stopping = supervisor.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    clock.advance(6_000);
    await stopping;
    expect(stopped).toBe(true);
  });

  it('stop() while waiting to restart cancels the restart and rejects waiters', async () => {
    const { supervisor, clock, children, latest } = setup();
    const started = supervisor.start();
    latest().exit(1);
    const stopping = supervisor.stop();
    await expect(started).rejects.toThrow(/stopped/);
    await stopping;
    clock.advance(60_000);
    expect(children).toHaveLength(1);
  });
});

describe('CoreSupervisor output and restart from the window', () => {
  /** Stream 'data' events are delivered asynchronously. */
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('keeps the child output in a bounded ring and reports a crash with its tail', async () => {
    const { supervisor, clock, latest, events } = setup({ maxFailures: 1, outputLines: 3 });
    const started = supervisor.start();
    const child = latest();
    child.stdout.write('appliance listening on https://127.0.0.1:1\nline two\n');
    child.stderr.write('Error: SQLITE_CORRUPT: database disk image is malformed\n    at op');
    await flush();
    child.exit(1);
    await expect(started).rejects.toThrow(/failed 1 times/);
    const failed = events.find((event) => event.type === 'failed');
    expect(failed?.type === 'failed' && failed.error.logTail).toEqual([
      'line two',
      'Error: SQLITE_CORRUPT: database disk image is malformed',
      '    at op',
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'exit',
        code: 1,
        logTail: expect.arrayContaining(['    at op']),
      }),
    );
    expect(supervisor.lastFailure?.logTail).toHaveLength(3);
    clock.advance(60_000);
  });

  it('restart() starts a given-up core again with a fresh failure count and current options', async () => {
    let port = 1;
    const { supervisor, children, latest, forkCalls } = setup({
      maxFailures: 1,
      forkOptions: () => ({ env: { APPLIANCE_SYSLOG_PORT: String(port) } }),
    });
    const started = supervisor.start();
    latest().exit(78);
    await expect(started).rejects.toThrow(/failed 1 times/);
    expect(supervisor.state).toBe('failed');

    port = 2;
    const restarted = supervisor.restart();
    expect(children).toHaveLength(2);
    latest().ready('https://127.0.0.1:40009');
    await expect(restarted).resolves.toMatchObject({ url: 'https://127.0.0.1:40009' });
    expect(supervisor.lastFailure).toBeUndefined();
    expect(forkCalls.map((call) => call.options.env?.APPLIANCE_SYSLOG_PORT)).toEqual(['1', '2']);
  });

  it('restart() of a running core stops it first, then starts a new one', async () => {
    const { supervisor, children, latest } = setup();
    const started = supervisor.start();
    const first = latest();
    first.ready('https://127.0.0.1:40001');
    await started;
    const restarted = supervisor.restart();
    await flush();
    expect(first.killed).toBe(true);
    expect(children).toHaveLength(2);
    latest().ready('https://127.0.0.1:40002');
    await expect(restarted).resolves.toMatchObject({ url: 'https://127.0.0.1:40002' });
  });
});

describe('isCoreReadyMessage', () => {
  it('accepts the message appliance-core/src/server.ts posts', () => {
    expect(
      isCoreReadyMessage({
        type: 'ready',
        url: 'https://[::1]:8443',
        certSha256: FINGERPRINT,
        ports: { syslog: { udp: 40514, tcp: 40514 }, netflow: { udp: 40555 } },
      }),
    ).toBe(true);
    expect(
      isCoreReadyMessage({
        type: 'ready',
        url: 'https://127.0.0.1:1',
        certSha256: null,
        ports: {},
      }),
    ).toBe(true);
  });

  it.each([
    null,
    'ready',
    { type: 'ready', url: 42, certSha256: null, ports: {} },
    { type: 'ready', url: 'ftp://x', certSha256: null, ports: {} },
    { type: 'ready', url: 'https://127.0.0.1:1', ports: {} },
    { type: 'ready', url: 'https://127.0.0.1:1', certSha256: 'ab:cd', ports: {} },
    { type: 'ready', url: 'https://127.0.0.1:1', certSha256: null },
    {
      type: 'ready',
      url: 'https://127.0.0.1:1',
      certSha256: null,
      ports: { syslog: { udp: '1' } },
    },
  ])('rejects %j', (message) => {
    expect(isCoreReadyMessage(message)).toBe(false);
  });
});
