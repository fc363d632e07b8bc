import { describe, expect, it } from 'vitest';
import {
  EngineNotFoundError,
  EngineRegistry,
  SharedEngineError,
  type Engine,
} from './engine-registry.js';

function recorder() {
  const log: string[] = [];
  const engine = (
    name: string,
    options: { failStart?: number; failStop?: boolean; slowMs?: number } = {},
  ): Engine => {
    let starts = 0;
    return {
      name,
      async start() {
        starts++;
        log.push(`start ${name}`);
        if (options.slowMs) await new Promise((r) => setTimeout(r, options.slowMs));
        if (options.failStart !== undefined && starts === options.failStart)
          throw new Error(`${name} cannot bind`);
      },
      async stop() {
        log.push(`stop ${name}`);
        if (options.failStop) throw new Error(`${name} hangs`);
      },
    };
  };
  return { log, engine };
}

describe('EngineRegistry', () => {
  it('keeps an engine stopped at boot when autoStart says so; shared resources always start', async () => {
    const { log, engine } = recorder();
    const registry = new EngineRegistry(() => 1000);
    registry.register({ ...engine('writer'), shared: true });
    registry.register(engine('pollers'));
    registry.register(engine('syslog'));
    await registry.startAll((name) => name !== 'syslog' && name !== 'writer');
    expect(log).toEqual(['start writer', 'start pollers']);
    expect(registry.status('syslog').state).toBe('stopped');
    await registry.start('syslog');
    expect(registry.status('syslog').state).toBe('running');
  });

  it('starts in registration order and stops in reverse, shared resources included', async () => {
    const { log, engine } = recorder();
    const registry = new EngineRegistry(() => 1000);
    registry.register({ ...engine('writer'), shared: true });
    registry.register(engine('pollers'));
    registry.register(engine('syslog'));
    registry.register({ ...engine('scheduler'), shared: true });
    await registry.startAll();
    expect(log.splice(0)).toEqual([
      'start writer',
      'start pollers',
      'start syslog',
      'start scheduler',
    ]);
    expect(registry.list()).toEqual([
      { name: 'writer', state: 'running', shared: true, startedAt: 1000, error: null },
      { name: 'pollers', state: 'running', shared: false, startedAt: 1000, error: null },
      { name: 'syslog', state: 'running', shared: false, startedAt: 1000, error: null },
      { name: 'scheduler', state: 'running', shared: true, startedAt: 1000, error: null },
    ]);
    await registry.stopAll();
    expect(log).toEqual(['stop scheduler', 'stop syslog', 'stop pollers', 'stop writer']);
    expect(registry.list().map((s) => s.state)).toEqual([
      'stopped',
      'stopped',
      'stopped',
      'stopped',
    ]);
  });

  it('restarts one engine without touching shared resources or other engines', async () => {
    const { log, engine } = recorder();
    let now = 1000;
    const registry = new EngineRegistry(() => now);
    registry.register({ ...engine('writer'), shared: true });
    registry.register(engine('syslog'));
    registry.register(engine('netflow'));
    await registry.startAll();
    log.splice(0);
    now = 5000;
    expect(await registry.restart('syslog')).toEqual({
      name: 'syslog',
      state: 'running',
      shared: false,
      startedAt: 5000,
      error: null,
    });
    expect(log).toEqual(['stop syslog', 'start syslog']);
    await expect(registry.restart('writer')).rejects.toThrow(SharedEngineError);
    await expect(registry.stop('writer')).rejects.toThrow(SharedEngineError);
    await expect(registry.restart('nope')).rejects.toThrow(EngineNotFoundError);
  });

  it('a failed restart leaves the engine failed with its error; a later start recovers', async () => {
    const { engine } = recorder();
    const registry = new EngineRegistry(() => 1);
    registry.register(engine('syslog', { failStart: 2 }));
    await registry.startAll();
    const status = await registry.restart('syslog');
    expect(status).toMatchObject({ state: 'failed', error: 'syslog cannot bind', startedAt: null });
    await registry.start('syslog');
    expect(registry.status('syslog')).toMatchObject({ state: 'running', error: null });
  });

  it('a failed start at boot is rethrown', async () => {
    const { engine } = recorder();
    const registry = new EngineRegistry();
    registry.register(engine('syslog', { failStart: 1 }));
    await expect(registry.startAll()).rejects.toThrow('syslog cannot bind');
    expect(registry.status('syslog').state).toBe('failed');
  });

  it('a failing stop is reported and the others still stop', async () => {
    const { log, engine } = recorder();
    const reported: string[] = [];
    const registry = new EngineRegistry(Date.now, (name, err) =>
      reported.push(`${name}: ${(err as Error).message}`),
    );
    registry.register(engine('a'));
    registry.register(engine('b', { failStop: true }));
    registry.register(engine('c'));
    await registry.startAll();
    log.splice(0);
    await registry.stopAll();
    expect(log).toEqual(['stop c', 'stop b', 'stop a']);
    expect(reported).toEqual(['b: b hangs']);
    expect(registry.status('b')).toMatchObject({ state: 'failed', error: 'b hangs' });
  });

  it('serialises operations on one engine: a restart during a slow start waits for it', async () => {
    const { log, engine } = recorder();
    const registry = new EngineRegistry();
    registry.register(engine('capture', { slowMs: 50 }));
    const starting = registry.start('capture');
    await new Promise((r) => setTimeout(r, 10));
    expect(registry.status('capture').state).toBe('starting');
    const restarted = registry.restart('capture');
    await Promise.all([starting, restarted]);
    expect(log).toEqual(['start capture', 'stop capture', 'start capture']);
    expect(registry.status('capture').state).toBe('running');
  });

  it('refuses a name registered twice', () => {
    const { engine } = recorder();
    const registry = new EngineRegistry();
    registry.register(engine('a'));
    expect(() => registry.register(engine('a'))).toThrow('engine a is registered twice');
  });
});
