/**
 * Latency probes for many targets with one fping process (`-C` per-target results on stderr),
 * never one process per target per probe. Only IP literals reach fping's command line (no name
 * is resolved, no argument can start with '-').
 */
import net from 'node:net';
import { runTool, ToolMissingError } from '../../platform/process/spawn.js';
import { SYSTEM_TOOLS, type SystemTool } from '../../platform/process/system-tools.js';

export interface PingReading {
  /** Average round trip of answered probes in ms, or -1 when none answered. */
  latency: number;
  /** Lost probes in percent. */
  loss: number;
}

export interface PingOptions {
  /** Probes per target (fping -C). */
  probes: number;
  /** Initial per-probe timeout in ms (fping -t). */
  timeoutMs: number;
  /** Minimum ms between any two probes (fping -i). */
  intervalMs?: number;
  /** Ms between probes to one target (fping -p). */
  periodMs?: number;
  tool?: SystemTool;
}

export class IcmpUnavailable extends Error {}

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

/** Probes every target once per call; a target fping gave no line for counts as all probes lost. */
export async function pingBatch(
  targets: readonly string[],
  signal: AbortSignal,
  options: PingOptions,
): Promise<Map<string, PingReading>> {
  const unique = [...new Set(targets)];
  for (const target of unique)
    if (net.isIP(target) === 0 || target.startsWith('-'))
      throw new Error(`not an IP literal: ${target}`);
  const result = new Map<string, PingReading>();
  if (unique.length === 0) return result;
  const probes = Math.max(1, Math.min(10, Math.round(options.probes)));
  const intervalMs = options.intervalMs ?? 1;
  const periodMs = options.periodMs ?? 20;
  const timeoutMs = Math.max(1, Math.round(options.timeoutMs));
  // Pacing of every probe, the wait for the last replies, and headroom for a busy machine.
  const budgetMs = 5000 + unique.length * probes * intervalMs + probes * periodMs + timeoutMs * 4;
  let run;
  try {
    run = await runTool(options.tool ?? SYSTEM_TOOLS.fping, {
      args: [
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
      timeoutMs: budgetMs,
      signal,
      maxOutputBytes: 64 + unique.length * (64 + probes * 10),
    });
  } catch (err) {
    if (err instanceof ToolMissingError) throw new IcmpUnavailable(err.message);
    throw err;
  }
  if (run.aborted) throw new Error('ping batch aborted');
  if (run.timedOut) throw new Error(`fping did not finish within ${budgetMs} ms`);
  // 0: all answered, 1: some unreachable, 2: some addresses not found; 3 and 4 are failures.
  if (run.code === null || run.code > 2)
    throw new Error(`fping failed (exit ${run.code}): ${run.stderr.trim().slice(0, 300)}`);
  const parsed = parseFpingCounts(run.stderr, probes);
  for (const target of unique) result.set(target, parsed.get(target) ?? { latency: -1, loss: 100 });
  return result;
}
