/**
 * What every tool shares: its options (with the appliance's defaults), the spawn helper
 * bound to the configured search path, and reverse DNS.
 */
import dns from 'node:dns';
import {
  startTool,
  type ToolProcess,
  type ToolResult,
  type ToolRunOptions,
} from '../../platform/process/spawn.js';
import type { SystemTool } from '../../platform/process/system-tools.js';

/** Resolves an IP literal to a host name, or null when it has none (or lookups are off). */
export type ReverseDns = (ip: string) => Promise<string | null>;

export interface SpeedTestOptions {
  /** Base URL of the speed-test server (see speedtest.tool.ts for the protocol). */
  url: string;
  /** How long each direction (download, upload) is measured. */
  durationMs: number;
  /** Parallel transfers per direction. */
  streams: number;
  downloadChunkBytes: number;
  uploadChunkBytes: number;
  latencySamples: number;
  /** Per-request limit for the latency probes and for reaching the server at all. */
  requestTimeoutMs: number;
}

export interface ToolsOptions {
  /** Directories searched for system programs (default: PATH plus the sbin directories). */
  searchPath: readonly string[] | undefined;
  /** null turns reverse DNS off. */
  reverseDns: ReverseDns | null;
  pingIntervalSeconds: number;
  mtrIntervalSeconds: number;
  /** How long mtr waits for late replies after its last cycle. */
  mtrGraceSeconds: number;
  /** Time budget of a port scan; past it the answer is `{status: 'timeout'}`. */
  portscanBudgetMs: number;
  iperfServerPort: number;
  /** Address the iperf3 server binds; null listens on every address. */
  iperfServerBind: string | null;
  speedtest: SpeedTestOptions;
  /** External geolocation lookup URL with `{ip}`; null means none. */
  geoipUrl: string | null;
  geoipDir: string;
  geoipCacheTtlMs: number;
  geoipTimeoutMs: number;
  /** whois server (`-h host -p port`); null lets whois choose the registry. */
  whoisServer: { host: string; port: number } | null;
}

export const DEFAULT_SPEEDTEST_URL = 'https://speed.cloudflare.com';
export const DEFAULT_GEOIP_URL = 'https://freeipapi.com/api/json/{ip}';
export const IPERF_PORT = 5201;

/** Reverse DNS through the system's resolver with a short timeout; failures are "no name". */
export function systemReverseDns(timeoutMs = 1500): ReverseDns {
  const resolver = new dns.promises.Resolver({ timeout: timeoutMs, tries: 1 });
  return async (ip) => {
    try {
      const names = await resolver.reverse(ip);
      return names[0] ?? null;
    } catch {
      return null;
    }
  };
}

export class ToolRunner {
  constructor(public options: ToolsOptions) {}

  start(tool: SystemTool, options: Omit<ToolRunOptions, 'searchPath'>): ToolProcess {
    return startTool(tool, {
      ...options,
      ...(this.options.searchPath ? { searchPath: this.options.searchPath } : {}),
    });
  }

  run(tool: SystemTool, options: Omit<ToolRunOptions, 'searchPath'>): Promise<ToolResult> {
    return this.start(tool, options).done;
  }

  async reverse(ip: string): Promise<string | null> {
    return this.options.reverseDns ? this.options.reverseDns(ip) : null;
  }
}

/** The first meaningful line a tool printed on failure, or a plain description. */
export function failureText(tool: SystemTool, result: ToolResult, timeoutMs: number): string {
  if (result.timedOut)
    return `${tool.program} did not finish within ${Math.round(timeoutMs / 1000)} seconds`;
  const line = result.stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (line) return line.slice(0, 300);
  return `${tool.program} exited with ${result.code !== null ? `code ${result.code}` : `signal ${result.signal ?? 'unknown'}`}`;
}

/** The text of an error thrown by a tool run (a missing program names itself and its package). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
