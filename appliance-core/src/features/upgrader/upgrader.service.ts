/**
 * The OS upgrade bootstrap (spec part 1, "Operating-system upgrade bootstrap"): status, install,
 * start and stop of the upgrader through the root helper (upgrader.runtime.ts).
 *
 * Invariants:
 * - The one-time token goes from the helper's answer to the caller's response and nowhere else:
 *   never stored, never logged, never in an audit row.
 * - A host without the mechanism (no root helper socket: a laptop, CI) answers honestly: the
 *   status says `unavailable`, install answers the spec's 404 (no package is bundled here), start
 *   and stop the spec's 500.
 */
import fs from 'node:fs';
import net from 'node:net';
import { failure } from '../../platform/http/envelopes.js';
import type { RootHelperResponse } from '../../platform/host/root-helper.protocol.js';
import { HelperUnreachable, type UpgraderHost } from './upgrader.runtime.js';
import type { UpgraderStatus } from './upgrader.schema.js';

export const NO_PACKAGE = 'No upgrader package is bundled with this appliance';
export const UNAVAILABLE = 'unavailable';

/** Time the helper may take per op (install runs apt-get; start waits for the token file). */
const TIMEOUT_MS = {
  'upgrader.status': 15_000,
  'upgrader.install': 660_000,
  'upgrader.start': 90_000,
  'upgrader.stop': 90_000,
} as const;

type UpgraderOp = keyof typeof TIMEOUT_MS;

export interface UpgraderOptions {
  host: UpgraderHost;
  version: string;
  /** The host's os-release, read for the codename when the helper is absent. */
  osRelease?: string;
}

export function codenameOf(osReleaseText: string): string {
  return /^VERSION_CODENAME=("?)([A-Za-z0-9._-]*)\1\s*$/m.exec(osReleaseText)?.[2] ?? '';
}

/** A host name fit for the upgrader URL (the one the caller reached the appliance by), or null. */
export function urlHost(hostname: string): string | null {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIPv6(bare)) return `[${bare}]`;
  if (net.isIPv4(bare)) return bare;
  return /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(
    bare,
  )
    ? bare.toLowerCase()
    : null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class UpgraderService {
  private readonly host: UpgraderHost;
  private readonly version: string;
  private readonly osRelease: string;

  constructor(options: UpgraderOptions) {
    this.host = options.host;
    this.version = options.version;
    this.osRelease = options.osRelease ?? '/etc/os-release';
  }

  private ask(op: UpgraderOp): Promise<RootHelperResponse> {
    return this.host.ask({ v: 1, op, args: {} }, TIMEOUT_MS[op]);
  }

  private localCodename(): string {
    try {
      return codenameOf(fs.readFileSync(this.osRelease, 'utf8'));
    } catch {
      return '';
    }
  }

  async info(): Promise<UpgraderStatus> {
    const base = {
      appliance_version: this.version,
      database_clusters: [],
    };
    let answer: RootHelperResponse | null = null;
    try {
      answer = await this.ask('upgrader.status');
    } catch {
      answer = null;
    }
    const out = answer?.ok ? answer.output : null;
    if (isRecord(out))
      return {
        codename: typeof out.codename === 'string' ? out.codename : this.localCodename(),
        ...base,
        upgrader_installed: out.upgrader_installed === true,
        upgrader_active:
          typeof out.upgrader_active === 'string' ? out.upgrader_active : UNAVAILABLE,
        upgrader_enabled:
          typeof out.upgrader_enabled === 'string' ? out.upgrader_enabled : UNAVAILABLE,
        upgrader_package_available: out.upgrader_package_available === true,
      };
    return {
      codename: this.localCodename(),
      ...base,
      upgrader_installed: false,
      upgrader_active: UNAVAILABLE,
      upgrader_enabled: UNAVAILABLE,
      upgrader_package_available: false,
    };
  }

  /** `{ok: true}` or `{ok: true, already_installed: true}`; 404 with no package here; else 500. */
  async install(): Promise<{ ok: true; already_installed?: true }> {
    let answer: RootHelperResponse;
    try {
      answer = await this.ask('upgrader.install');
    } catch (err) {
      if (err instanceof HelperUnreachable) throw failure(404, NO_PACKAGE);
      throw failure(500, `Installing the upgrader failed: ${(err as Error).message}`);
    }
    if (answer.ok)
      return isRecord(answer.output) && answer.output.already_installed === true
        ? { ok: true, already_installed: true }
        : { ok: true };
    if (answer.code === 'unsupported') throw failure(404, answer.message);
    throw failure(500, answer.message);
  }

  /** The upgrader's URL on the host the caller used, and its one-time token; 500 otherwise. */
  async start(callerHost: string, fallbackHost: string): Promise<{ url: string; token: string }> {
    let answer: RootHelperResponse;
    try {
      answer = await this.ask('upgrader.start');
    } catch (err) {
      throw failure(500, `The upgrader service failed to start: ${(err as Error).message}`);
    }
    if (!answer.ok) throw failure(500, answer.message);
    const out = answer.output;
    if (
      !isRecord(out) ||
      typeof out.token !== 'string' ||
      out.token.length === 0 ||
      !Number.isInteger(out.port)
    )
      throw failure(500, 'The upgrader token file is unreadable');
    const host = urlHost(callerHost) ?? urlHost(fallbackHost) ?? 'localhost';
    return { url: `https://${host}:${String(out.port)}/`, token: out.token };
  }

  /** Idempotent; the upgrader's current token dies with it. */
  async stop(): Promise<{ ok: true }> {
    let answer: RootHelperResponse;
    try {
      answer = await this.ask('upgrader.stop');
    } catch (err) {
      throw failure(500, `The upgrader service failed to stop: ${(err as Error).message}`);
    }
    if (!answer.ok) throw failure(500, answer.message);
    return { ok: true };
  }
}
