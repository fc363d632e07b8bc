/**
 * Port scan with nmap: always -n (no DNS for results), -Pn (scan even when the host ignores
 * ping), a timing template 3, 4 or 5, optional version detection (-sV), and a time budget after
 * which the scan is ended and the answer is a timeout.
 */
import type { Target } from '../../platform/net/targets.js';
import { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';
import { ToolFailure } from '../../platform/process/tool-failure.js';
import { failureText, type ToolRunner } from './tools.runtime.js';

export const MAX_PORT_ITEMS = 100;

/**
 * A port list of single ports and ranges separated by commas (`22,80,443,8000-8100`), spaces
 * allowed around items; null when malformed. Returned normalized for nmap's -p.
 */
export function parsePortList(input: string): string | null {
  const items = input.split(',').map((item) => item.trim());
  if (items.length === 0 || items.length > MAX_PORT_ITEMS) return null;
  const port = (text: string) =>
    /^\d{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65535 ? Number(text) : null;
  const normalized: string[] = [];
  for (const item of items) {
    const range = /^(\d+)\s*-\s*(\d+)$/.exec(item);
    if (range) {
      const from = port(range[1] as string);
      const to = port(range[2] as string);
      if (from === null || to === null || from > to) return null;
      normalized.push(from === to ? String(from) : `${from}-${to}`);
      continue;
    }
    const single = port(item);
    if (single === null) return null;
    normalized.push(String(single));
  }
  return normalized.join(',');
}

/** `3`, `4` or `5` (as number or text); anything else is 4. */
export function normalizeTiming(value: unknown): 3 | 4 | 5 {
  const text = typeof value === 'number' || typeof value === 'string' ? String(value).trim() : '';
  return text === '3' ? 3 : text === '5' ? 5 : 4;
}

export function wantsServiceDetection(value: unknown): boolean {
  return value === true || value === 1 || value === 'true' || value === '1';
}

export function nmapArgs(
  target: Target,
  ports: string,
  timing: 3 | 4 | 5,
  service: boolean,
): string[] {
  return [
    '-n',
    '-Pn',
    `-T${timing}`,
    '-p',
    ports,
    ...(service ? ['-sV'] : []),
    ...(target.kind === 'ipv6' ? ['-6'] : []),
    '--',
    target.value,
  ];
}

/** A scan that ran, or ran out of its time budget (an answer, not a failure, in the spec). */
export type PortscanOutcome =
  { kind: 'done'; output: string } | { kind: 'timeout'; message: string };

/** Scans; throws a ToolFailure when nmap could not run or failed. */
export async function portscan(
  runner: ToolRunner,
  target: Target,
  ports: string,
  timing: 3 | 4 | 5,
  service: boolean,
  signal?: AbortSignal,
): Promise<PortscanOutcome> {
  const budget = runner.options.portscanBudgetMs;
  const result = await runner.run(SYSTEM_TOOLS.nmap, {
    args: nmapArgs(target, ports, timing, service),
    timeoutMs: budget,
    ...(signal ? { signal } : {}),
  });
  if (result.timedOut) {
    const seconds = Math.max(1, Math.round(budget / 1000));
    return {
      kind: 'timeout',
      message: `The port scan did not finish within ${seconds} second${seconds === 1 ? '' : 's'}`,
    };
  }
  // nmap exits 0 when it could not resolve its only target: that is a failure too.
  const nothingScanned = /\b0 IP addresses\b/.test(result.stdout) && result.stderr.trim() !== '';
  if (result.code !== 0 || nothingScanned)
    throw new ToolFailure(failureText(SYSTEM_TOOLS.nmap, result, budget));
  return { kind: 'done', output: result.stdout };
}
