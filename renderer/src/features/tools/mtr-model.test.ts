import { describe, expect, it } from 'vitest';
import { applyFrame, lossOf, sortedHops, type HopStats } from './mtr-model.js';

describe('MTR frames', () => {
  it('fold into per-hop statistics', () => {
    let hops = new Map<number, HopStats>();
    for (const f of [
      { type: 'sent', hop: 1 },
      { type: 'host', hop: 1, host: '10.0.0.1' },
      { type: 'reply', hop: 1, latency: 2 },
      { type: 'sent', hop: 1 },
      { type: 'reply', hop: 1, latency: 4 },
      { type: 'sent', hop: 0 },
      { type: 'sent', hop: 1 },
    ] as const)
      hops = applyFrame(hops, f);
    const [h0, h1] = sortedHops(hops);
    expect(h0).toMatchObject({ hop: 0, sent: 1, received: 0 });
    expect(h1).toMatchObject({
      hop: 1,
      hosts: ['10.0.0.1'],
      sent: 3,
      received: 2,
      best: 2,
      worst: 4,
      avg: 3,
      last: 4,
    });
    expect(Math.round(lossOf(h1!))).toBe(33);
  });
});
