/**
 * The fping wrapper against the real fping on loopback targets: one process for many targets,
 * IP literals only, and a missing program reported as FpingUnavailable by both callers' entry
 * points.
 */
import { describe, expect, it } from 'vitest';
import { havePeer } from '../../../../test/harness/peers.js';
import { fpingAlive, fpingLatency, FpingUnavailable, parseFpingCounts } from './fping.js';

const signal = () => new AbortController().signal;
const missing = { program: 'fping-not-installed', debianPackage: 'fping' };

describe('fping', () => {
  it('parses fping -C output: averages answered probes, loss in percent, -1 when none answered', () => {
    const parsed = parseFpingCounts(
      '127.0.0.1 : 0.05 0.07 -\n127.0.0.2 : - - -\n::1       : 0.02 0.02 0.02\nICMP Host Unreachable from x\n',
      3,
    );
    expect(parsed.get('127.0.0.1')).toEqual({ latency: 0.06, loss: 33.33 });
    expect(parsed.get('127.0.0.2')).toEqual({ latency: -1, loss: 100 });
    expect(parsed.get('::1')).toEqual({ latency: 0.02, loss: 0 });
    expect(parsed.size).toBe(3);
  });

  it('never lets a target that is not an IP literal reach fping', async () => {
    for (const run of [
      (targets: string[]) => fpingLatency(targets, signal(), { probes: 1, timeoutMs: 100 }),
      (targets: string[]) => fpingAlive(targets, signal()),
    ]) {
      await expect(run(['-f', '127.0.0.1'])).rejects.toThrow('not an IP literal: -f');
      await expect(run(['localhost'])).rejects.toThrow('not an IP literal: localhost');
    }
  });

  it('reports a missing fping as FpingUnavailable, naming the package', async () => {
    const latency = fpingLatency(['127.0.0.1'], signal(), {
      probes: 1,
      timeoutMs: 100,
      tool: missing,
    });
    await expect(latency).rejects.toBeInstanceOf(FpingUnavailable);
    await expect(latency).rejects.toThrow(
      'fping-not-installed is not installed (Debian package fping)',
    );
    await expect(fpingAlive(['127.0.0.1'], signal(), { tool: missing })).rejects.toBeInstanceOf(
      FpingUnavailable,
    );
  });

  it('runs nothing for no targets and refuses an aborted signal', async () => {
    expect(await fpingAlive([], signal(), { tool: missing })).toEqual([]);
    expect(
      (await fpingLatency([], signal(), { probes: 1, timeoutMs: 1, tool: missing })).size,
    ).toBe(0);
    const aborted = new AbortController();
    aborted.abort();
    await expect(fpingAlive(['127.0.0.1'], aborted.signal)).rejects.toThrow('fping aborted');
  });

  it.runIf(havePeer('fping', 'fping'))(
    'pings many loopback targets with one fping process',
    async () => {
      const targets = Array.from({ length: 50 }, (_, i) => `127.0.7.${i + 1}`);
      const readings = await fpingLatency([...targets, '::1', '127.0.7.1'], signal(), {
        probes: 2,
        timeoutMs: 500,
      });
      expect(readings.size).toBe(51);
      for (const reading of readings.values()) {
        expect(reading.loss).toBe(0);
        expect(reading.latency).toBeGreaterThanOrEqual(0);
      }
      expect(await fpingAlive(['127.0.7.3', '127.0.7.4', '127.0.7.3'], signal())).toEqual([
        '127.0.7.3',
        '127.0.7.4',
      ]);
    },
  );
});
