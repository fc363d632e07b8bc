/** MTR frames (spec part 2: `sent`, `host`, `reply` per hop) folded into a hop table. Pure. */
export interface MtrFrame {
  type: 'sent' | 'host' | 'reply';
  hop: number;
  host?: string;
  latency?: number;
}

export interface HopStats {
  hop: number;
  hosts: string[];
  sent: number;
  received: number;
  last: number | null;
  best: number | null;
  worst: number | null;
  avg: number | null;
  /** Every reply's latency, in order (the per-hop strip). */
  samples: number[];
}

export function emptyHop(hop: number): HopStats {
  return {
    hop,
    hosts: [],
    sent: 0,
    received: 0,
    last: null,
    best: null,
    worst: null,
    avg: null,
    samples: [],
  };
}

export function applyFrame(hops: Map<number, HopStats>, frame: MtrFrame): Map<number, HopStats> {
  const next = new Map(hops);
  const current = { ...(next.get(frame.hop) ?? emptyHop(frame.hop)) };
  if (frame.type === 'sent') current.sent++;
  else if (frame.type === 'host' && frame.host && !current.hosts.includes(frame.host))
    current.hosts = [...current.hosts, frame.host];
  else if (frame.type === 'reply' && typeof frame.latency === 'number') {
    const l = frame.latency;
    current.received++;
    current.last = l;
    current.best = current.best === null ? l : Math.min(current.best, l);
    current.worst = current.worst === null ? l : Math.max(current.worst, l);
    current.samples = [...current.samples, l];
    current.avg = current.samples.reduce((s, x) => s + x, 0) / current.samples.length;
  }
  next.set(frame.hop, current);
  return next;
}

/** Loss in percent: replies missing from what was sent (a reply can lag its probe). */
export function lossOf(h: HopStats): number {
  if (h.sent === 0) return 0;
  return Math.max(0, Math.min(100, ((h.sent - h.received) / h.sent) * 100));
}

export function sortedHops(hops: Map<number, HopStats>): HopStats[] {
  return [...hops.values()].sort((a, b) => a.hop - b.hop);
}
