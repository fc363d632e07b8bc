/**
 * Traceroute with path MTU per hop, through tracepath (iputils), which discovers the path MTU as
 * it goes. Its lines:
 *    1?: [LOCALHOST]                      pmtu 1500
 *    1:  192.0.2.1                         0.637ms
 *    2:  198.51.100.1                      0.674ms pmtu 1480
 *    3:  no reply
 *    4:  203.0.113.9                      10.2ms reached
 *        Resume: pmtu 1480 hops 4 back 4
 * A `pmtu N` note says the MTU dropped to N from that hop on.
 */
import { isIpLiteral, type Target } from '../../platform/net/targets.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import type { TraceHop } from './tools.schema.js';
import { failureText, type ToolRunner } from './tools.runtime.js';

export const MAX_HOPS = 10;
export const TRACE_BUDGET_MS = 90_000;

export interface ParsedHop {
  hop: number;
  address: string;
  latency: number | null;
  mtu: number | null;
}

export function parseTracepath(output: string, maxHops = MAX_HOPS): ParsedHop[] {
  const hops = new Map<number, { address: string; latency: number | null }>();
  const pmtuAt = new Map<number, number>();
  let initial: number | null = null;
  let resume: number | null = null;
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    const resumeMatch = /^Resume: pmtu (\d+)/.exec(line);
    if (resumeMatch) {
      resume = Number(resumeMatch[1]);
      continue;
    }
    const match = /^(\d+)(\??):\s+(.*)$/.exec(line);
    if (!match) continue;
    const hop = Number(match[1]);
    const rest = match[3] as string;
    const pmtu = /\bpmtu (\d+)/.exec(rest);
    if (rest.startsWith('[LOCALHOST]')) {
      if (pmtu) initial = Number(pmtu[1]);
      continue;
    }
    if (hop < 1 || hop > maxHops) continue;
    if (pmtu && !pmtuAt.has(hop)) pmtuAt.set(hop, Number(pmtu[1]));
    if (rest.startsWith('no reply')) {
      if (!hops.has(hop)) hops.set(hop, { address: '*', latency: null });
      continue;
    }
    const address = rest.split(/\s+/)[0] as string;
    if (address === '...' || address.length === 0) continue;
    const latency = /(\d+(?:\.\d+)?)ms/.exec(rest);
    const known = hops.get(hop);
    if (!known || known.address === '*')
      hops.set(hop, { address, latency: latency ? Number(latency[1]) : null });
  }
  const numbers = [...hops.keys()].sort((a, b) => a - b);
  const lastChange = Math.max(0, ...pmtuAt.keys());
  let current = initial;
  return numbers.map((hop) => {
    current = pmtuAt.get(hop) ?? current;
    // Before any reported value the MTU is the final one only when it never changed later.
    const mtu = current ?? (hop >= lastChange ? resume : null);
    const entry = hops.get(hop) as { address: string; latency: number | null };
    return { hop, address: entry.address, latency: entry.latency, mtu };
  });
}

export function tracepathArgs(target: Target): string[] {
  return ['-n', '-m', String(MAX_HOPS), '--', target.value];
}

/** The hops to a target; throws a ToolFailure when tracepath could not run or found none. */
export async function traceroute(
  runner: ToolRunner,
  target: Target,
  signal?: AbortSignal,
): Promise<TraceHop[]> {
  const result = await runner.run(SYSTEM_TOOLS.tracepath, {
    args: tracepathArgs(target),
    timeoutMs: TRACE_BUDGET_MS,
    ...(signal ? { signal } : {}),
  });
  const hops = parseTracepath(result.stdout);
  if (hops.length === 0)
    throw new ToolFailure(failureText(SYSTEM_TOOLS.tracepath, result, TRACE_BUDGET_MS));
  return Promise.all(
    hops.map(async (hop) => ({
      ...hop,
      hostname: isIpLiteral(hop.address)
        ? ((await runner.reverse(hop.address)) ?? hop.address)
        : 'N/A',
    })),
  );
}
