import { describe, expect, it } from 'vitest';
import { parseTarget, type Target } from '../../platform/net/targets.js';
import { ScriptedRunner } from './testing/scripted-runner.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { parseTracepath, traceroute, tracepathArgs } from './traceroute.tool.js';

describe('tracepath output', () => {
  it('reads a one-hop loopback trace (the MTU comes from the resume line)', () => {
    const out =
      ' 1:  127.0.0.1                                             0.207ms reached\n     Resume: pmtu 65535 hops 1 back 1 \n';
    expect(parseTracepath(out)).toEqual([
      { hop: 1, address: '127.0.0.1', latency: 0.207, mtu: 65535 },
    ]);
  });

  it('follows MTU changes along the path, keeps the first answer of a hop, and marks silent hops', () => {
    const out = [
      ' 1?: [LOCALHOST]                      pmtu 1500',
      ' 1:  192.0.2.1                         0.637ms',
      ' 1:  192.0.2.1                         0.594ms',
      ' 2:  198.51.100.1                      0.674ms pmtu 1480',
      ' 2:  198.51.100.1                      0.698ms asymm  3',
      ' 3:  no reply',
      ' 4:  203.0.113.9                      10.25ms reached',
      '     Resume: pmtu 1480 hops 4 back 4 ',
    ].join('\n');
    expect(parseTracepath(out)).toEqual([
      { hop: 1, address: '192.0.2.1', latency: 0.637, mtu: 1500 },
      { hop: 2, address: '198.51.100.1', latency: 0.674, mtu: 1480 },
      { hop: 3, address: '*', latency: null, mtu: 1480 },
      { hop: 4, address: '203.0.113.9', latency: 10.25, mtu: 1480 },
    ]);
  });

  it('leaves the MTU unknown before a change when the starting MTU was not printed', () => {
    const out = [
      ' 1:  192.0.2.1   1.0ms',
      ' 2:  198.51.100.1   2.0ms pmtu 1400',
      ' 3:  203.0.113.9   3.0ms reached',
      '     Resume: pmtu 1400 hops 3 back 3',
    ].join('\n');
    expect(parseTracepath(out).map((h) => h.mtu)).toEqual([null, 1400, 1400]);
  });

  it('takes a later answer over no reply, and stops at 10 hops', () => {
    const lines = [' 1:  no reply', ' 1:  192.0.2.1   1.5ms'];
    for (let hop = 2; hop <= 12; hop++) lines.push(` ${hop}:  no reply`);
    const hops = parseTracepath(lines.join('\n'));
    expect(hops[0]).toEqual({ hop: 1, address: '192.0.2.1', latency: 1.5, mtu: null });
    expect(hops).toHaveLength(10);
    expect(hops.at(-1)!.hop).toBe(10);
  });

  it('is empty for output without hops', () => {
    expect(parseTracepath('tracepath: nowhere.invalid: Name or service not known\n')).toEqual([]);
  });

  it('builds the argument list: numeric, 10 hops, target after --', () => {
    expect(tracepathArgs(parseTarget('example.net') as Target)).toEqual([
      '-n',
      '-m',
      '10',
      '--',
      'example.net',
    ]);
  });
});

describe('traceroute engine outcomes', () => {
  it('names hops: the reverse name of an IP, N/A for a silent hop', async () => {
    const runner = new ScriptedRunner({
      lines: [
        ' 1:  192.0.2.1   1.0ms',
        ' 2:  no reply',
        ' 3:  203.0.113.9   3.0ms reached',
        '     Resume: pmtu 1500 hops 3 back 3',
      ],
    });
    runner.options = {
      ...runner.options,
      reverseDns: async (ip) => (ip === '192.0.2.1' ? 'gw.example' : null),
    };
    expect(await traceroute(runner, parseTarget('203.0.113.9') as Target)).toEqual([
      { hop: 1, address: '192.0.2.1', latency: 1, hostname: 'gw.example', mtu: 1500 },
      { hop: 2, address: '*', latency: null, hostname: 'N/A', mtu: 1500 },
      { hop: 3, address: '203.0.113.9', latency: 3, hostname: '203.0.113.9', mtu: 1500 },
    ]);
  });

  it('fails with what tracepath said when there are no hops', async () => {
    const runner = new ScriptedRunner({
      code: 1,
      stderr: 'tracepath: nowhere.example: Name or service not known\n',
    });
    const failed = traceroute(runner, parseTarget('nowhere.example') as Target);
    await expect(failed).rejects.toBeInstanceOf(ToolFailure);
    await expect(failed).rejects.toThrow('tracepath: nowhere.example: Name or service not known');
  });
});
