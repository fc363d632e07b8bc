/**
 * The one fping wrapper: ICMP for many targets with ONE fping process (never one process per
 * target), through the process helper (argument array, process group, timeout, abort). Used by
 * the discovery sweep (`fpingAlive`: which addresses answer) and the latency pollers
 * (`fpingLatency`: round trip and loss per target).
 *
 * Invariants:
 * - Only IP literals reach fping's command line: no name is ever resolved and no argument can
 *   start with '-' (a target that is not an IP literal is refused before anything runs).
 * - A missing fping is `FpingUnavailable` (its message names the program and its Debian
 *   package); every other failure (exit 3 or 4, time budget, abort) is a plain Error.
 * - Each run has a time budget computed from its pacing, so a hung fping never holds a caller.
 *   One fping for 2,000 loopback targets used 0.1 s of CPU; 200 fpings of 10 targets, 0.73 s.
 */
import net from 'node:net';
import { runTool, ToolMissingError, type ToolResult } from '../process/spawn.js';
import { SYSTEM_TOOLS, type SystemTool } from '../process/system-tools.js';

/** fping is not installed (or not runnable): the caller reports it, it is not a bug. */
export class FpingUnavailable extends Error {}

export interface PingReading {
  /** Average round trip of answered probes in ms, or -1 when none answered. */
  latency: number;
  /** Lost probes in percent. */
  loss: number;
}

export interface AliveOptions {
  /** Per-probe timeout in ms (fping -t, default 500). */
  timeoutMs?: number;
  /** Retries per target (fping -r, default 1). */
  retries?: number;
  /** Milliseconds between probes to successive targets (fping -i, default 2). */
  intervalMs?: number;
  /** The program (default fping); tests name a missing one. */
  tool?: SystemTool;
}

export interface LatencyOptions {
  /** Probes per target (fping -C, 1 to 10). */
  probes: number;
  /** Initial per-probe timeout in ms (fping -t). */
  timeoutMs: number;
  /** Minimum ms between any two probes (fping -i, default 1). */
  intervalMs?: number;
  /** Ms between probes to one target (fping -p, default 20). */
  periodMs?: number;
  tool?: SystemTool;
}

/** The distinct targets, each checked to be an IP literal. */
function ipLiterals(targets: readonly string[]): string[] {
  const unique = [...new Set(targets)];
  for (const target of unique)
    if (net.isIP(target) === 0 || target.startsWith('-'))
      throw new Error(`not an IP literal: ${target}`);
  return unique;
}

async function runFping(
  tool: SystemTool | undefined,
  args: string[],
  options: { budgetMs: number; signal: AbortSignal; maxOutputBytes: number },
): Promise<ToolResult> {
  if (options.signal.aborted) throw new Error('fping aborted');
  let result: ToolResult;
  try {
    result = await runTool(tool ?? SYSTEM_TOOLS.fping, {
      args,
      timeoutMs: options.budgetMs,
      signal: options.signal,
      maxOutputBytes: options.maxOutputBytes,
    });
  } catch (err) {
    if (err instanceof ToolMissingError) throw new FpingUnavailable(err.message);
    throw err;
  }
  if (result.aborted) throw new Error('fping aborted');
  if (result.timedOut) throw new Error(`fping did not finish within ${options.budgetMs} ms`);
  // 0: all answered, 1: some unreachable, 2: some addresses not found; 3 and 4 are fping failures.
  if (result.code === null || result.code > 2)
    throw new Error(`fping failed (exit ${result.code}): ${result.stderr.trim().slice(0, 300)}`);
  return result;
}

/** The addresses among `targets` that answer (fping -a), in fping's order. */
export async function fpingAlive(
  targets: readonly string[],
  signal: AbortSignal,
  options: AliveOptions = {},
): Promise<string[]> {
  const unique = ipLiterals(targets);
  if (unique.length === 0) return [];
  const timeoutMs = options.timeoutMs ?? 500;
  const retries = options.retries ?? 1;
  const intervalMs = options.intervalMs ?? 2;
  // fping paces targets by the interval, then waits for the last replies (backoff 1.5 per retry).
  const budgetMs =
    5000 + unique.length * intervalMs * (retries + 1) + timeoutMs * 4 * (retries + 1);
  const result = await runFping(
    options.tool,
    [
      '-a',
      '-q',
      '-r',
      String(retries),
      '-t',
      String(timeoutMs),
      '-i',
      String(intervalMs),
      ...unique,
    ],
    { budgetMs, signal, maxOutputBytes: 64 * 1024 },
  );
  const wanted = new Set(unique);
  return [
    ...new Set(
      result.stdout
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => wanted.has(line)),
    ),
  ];
}

/** Parses fping -C -q output lines (`127.0.0.1 : 0.05 - 0.04`). */
export function parseFpingCounts(output: string, probes: number): Map<string, PingReading> {
  const readings = new Map<string, PingReading>();
  for (const line of output.split('\n')) {
    const match = /^(\S+)\s+:\s+([0-9.\s-]+)$/.exec(line.trim());
    if (!match) continue;
    const values = (match[2] as string).trim().split(/\s+/);
    const answered = values
      .filter((v) => v !== '-')
      .map(Number)
      .filter((v) => Number.isFinite(v));
    const total = Math.max(probes, values.length);
    readings.set(match[1] as string, {
      latency: answered.length
        ? Math.round((answered.reduce((a, b) => a + b, 0) / answered.length) * 1000) / 1000
        : -1,
      loss: Math.round(((total - answered.length) / total) * 10000) / 100,
    });
  }
  return readings;
}

/**
 * Probes every target `probes` times (fping -C); a target fping gave no line for counts as all
 * probes lost.
 */
export async function fpingLatency(
  targets: readonly string[],
  signal: AbortSignal,
  options: LatencyOptions,
): Promise<Map<string, PingReading>> {
  const unique = ipLiterals(targets);
  const result = new Map<string, PingReading>();
  if (unique.length === 0) return result;
  const probes = Math.max(1, Math.min(10, Math.round(options.probes)));
  const intervalMs = options.intervalMs ?? 1;
  const periodMs = options.periodMs ?? 20;
  const timeoutMs = Math.max(1, Math.round(options.timeoutMs));
  // Pacing of every probe, the wait for the last replies, and headroom for a busy machine.
  const budgetMs = 5000 + unique.length * probes * intervalMs + probes * periodMs + timeoutMs * 4;
  const run = await runFping(
    options.tool,
    [
      '-C',
      String(probes),
      '-q',
      '-t',
      String(timeoutMs),
      '-i',
      String(intervalMs),
      '-p',
      String(periodMs),
      '-r',
      '0',
      ...unique,
    ],
    { budgetMs, signal, maxOutputBytes: 64 + unique.length * (64 + probes * 10) },
  );
  const parsed = parseFpingCounts(run.stderr, probes);
  for (const target of unique) result.set(target, parsed.get(target) ?? { latency: -1, loss: 100 });
  return result;
}
