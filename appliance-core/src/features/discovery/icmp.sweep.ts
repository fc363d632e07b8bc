/**
 * ICMP sweep of a batch of IPv4 addresses with one fping process (alive targets on stdout),
 * through the platform's process helper (argument array, process group, timeout, abort). Only
 * IP literals checked here ever reach fping's command line, so no argument can start with '-'
 * and fping never resolves a name.
 */
import { runTool, ToolMissingError } from '../../platform/process/spawn.js';
import { SYSTEM_TOOLS, type SystemTool } from '../../platform/process/system-tools.js';
import { ipv4ToNumber } from './ipv4.js';

export interface IcmpOptions {
  /** The program (default fping); tests name a missing one. */
  tool?: SystemTool;
  /** Per-probe timeout in ms (fping -t). */
  timeoutMs?: number;
  /** Retries per target (fping -r). */
  retries?: number;
  /** Milliseconds between probes to successive targets (fping -i). */
  intervalMs?: number;
}

export class IcmpUnavailable extends Error {}

/** The alive addresses among `targets` (IPv4 literals), in fping's order. */
export async function icmpAlive(
  targets: readonly string[],
  signal: AbortSignal,
  options: IcmpOptions = {},
): Promise<string[]> {
  for (const target of targets)
    if (ipv4ToNumber(target) === null) throw new Error(`not an IPv4 literal: ${target}`);
  if (targets.length === 0) return [];
  if (signal.aborted) throw new Error('sweep aborted');
  const timeoutMs = options.timeoutMs ?? 500;
  const retries = options.retries ?? 1;
  const intervalMs = options.intervalMs ?? 2;
  // fping paces targets by the interval, then waits for the last replies (backoff 1.5 per retry).
  const budgetMs =
    5000 + targets.length * intervalMs * (retries + 1) + timeoutMs * 4 * (retries + 1);
  let result;
  try {
    result = await runTool(options.tool ?? SYSTEM_TOOLS.fping, {
      args: [
        '-a',
        '-q',
        '-r',
        String(retries),
        '-t',
        String(timeoutMs),
        '-i',
        String(intervalMs),
        ...targets,
      ],
      timeoutMs: budgetMs,
      signal,
      maxOutputBytes: 64 * 1024,
    });
  } catch (err) {
    if (err instanceof ToolMissingError) throw new IcmpUnavailable(err.message);
    throw err;
  }
  if (result.aborted) throw new Error('sweep aborted');
  if (result.timedOut) throw new Error(`fping did not finish within ${budgetMs} ms`);
  // 0: all alive, 1: some unreachable, 2: some addresses not found; 3 and 4 are fping failures.
  if (result.code === null || result.code > 2)
    throw new Error(`fping failed (exit ${result.code}): ${result.stderr.trim().slice(0, 300)}`);
  const wanted = new Set(targets);
  return [
    ...new Set(
      result.stdout
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => wanted.has(line)),
    ),
  ];
}
