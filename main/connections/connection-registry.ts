/**
 * Saved connections with their pinned agents: adding, editing and removing appliances by URL,
 * the trust-on-first-use probe, re-pinning, and one PinnedAgent per connection (rebuilt when its
 * origin or pin changes, so no pooled socket outlives the decision it was made under).
 */
import {
  connectionBaseUrl,
  type CertificateSummary,
  type ConnectionSummary,
  type ProbeResult,
} from '../../electron/contract/bridge.js';
import { PinnedAgent, probeCertificate, type TrustStore } from './certificate-pinning.js';
import {
  type ConnectionStore,
  ConnectionStoreError,
  normalizeApplianceUrl,
  normalizeFingerprint,
  type SavedConnection,
} from './connection-store.js';

export interface ConnectionRegistryOptions {
  store: ConnectionStore;
  trustStore: TrustStore;
  log(message: string, error?: unknown): void;
  /** Probe budget (tests shorten it). */
  probeTimeoutMs?: number;
}

export class ConnectionRegistry {
  private readonly agents = new Map<string, { agent: PinnedAgent; origin: string }>();

  constructor(private readonly options: ConnectionRegistryOptions) {
    options.store.onChange(() => this.dropStaleAgents());
  }

  get store(): ConnectionStore {
    return this.options.store;
  }

  get(id: string): SavedConnection | undefined {
    return this.options.store.get(id);
  }

  /** The connection's agent; the pin is read at each new TLS connection. */
  agentFor(connection: SavedConnection): PinnedAgent {
    const cached = this.agents.get(connection.id);
    if (cached && cached.origin === connection.origin) return cached.agent;
    cached?.agent.destroy();
    const id = connection.id;
    const agent = new PinnedAgent({
      trustStore: this.options.trustStore,
      pinnedSha256: () => this.options.store.get(id)?.pinnedSha256 ?? null,
      onRepin: (presentedSha256) => {
        this.options.log(
          `connection ${id}: a certificate trusted by the operating system replaced the pinned one; re-pinned to ${presentedSha256}`,
        );
        this.options.store.update(id, { pinnedSha256: presentedSha256 });
      },
    });
    this.agents.set(id, { agent, origin: connection.origin });
    return agent;
  }

  /** What the appliance at `url` presents, against the pin of a saved connection at that origin. */
  async probe(url: string): Promise<ProbeResult> {
    const origin = normalizeApplianceUrl(url);
    const certificate = await this.fetchCertificate(origin);
    const saved = this.options.store.list().find((connection) => connection.origin === origin);
    const pinnedSha256 = saved?.pinnedSha256 ?? null;
    return { origin, certificate, pinnedSha256, status: probeStatus(pinnedSha256, certificate) };
  }

  /**
   * Saves a remote appliance. The user accepted `acceptSha256` after a probe; it must still be
   * what the appliance presents (a certificate trusted by the OS is accepted as presented).
   */
  async add(input: { url: string; name?: string; acceptSha256: string }): Promise<SavedConnection> {
    const origin = normalizeApplianceUrl(input.url);
    const certificate = await this.confirmCertificate(origin, input.acceptSha256);
    return this.options.store.addRemote({
      url: origin,
      ...(input.name !== undefined ? { name: input.name } : {}),
      pinnedSha256: certificate.sha256,
    });
  }

  /** Renames a connection, or moves it to another URL (which needs a new acceptance). */
  async edit(input: {
    id: string;
    name?: string;
    url?: string;
    acceptSha256?: string;
  }): Promise<{ connection: SavedConnection; originChanged: boolean }> {
    const current = this.requireConnection(input.id);
    const changes: { name?: string; origin?: string; pinnedSha256?: string } = {};
    if (input.name !== undefined) changes.name = input.name;
    let originChanged = false;
    if (input.url !== undefined) {
      const origin = normalizeApplianceUrl(input.url);
      if (origin !== current.origin) {
        if (input.acceptSha256 === undefined) {
          throw new ConnectionStoreError(
            'a new URL needs its certificate accepted: probe it first, then send acceptSha256',
          );
        }
        const certificate = await this.confirmCertificate(origin, input.acceptSha256);
        changes.origin = origin;
        changes.pinnedSha256 = certificate.sha256;
        originChanged = true;
      }
    }
    return { connection: this.options.store.update(input.id, changes), originChanged };
  }

  /** The user accepts a changed certificate that was refused. */
  async repin(input: { id: string; acceptSha256: string }): Promise<SavedConnection> {
    const current = this.requireConnection(input.id);
    const certificate = await this.confirmCertificate(current.origin, input.acceptSha256);
    return this.options.store.update(input.id, { pinnedSha256: certificate.sha256 });
  }

  remove(id: string): void {
    this.options.store.remove(id);
    this.agents.get(id)?.agent.destroy();
    this.agents.delete(id);
  }

  summaries(
    authOf: (id: string) => { signedIn: boolean; method: 'password' | 'device' | null },
  ): ConnectionSummary[] {
    return this.options.store.list().map((connection) => this.summaryOf(connection, authOf));
  }

  summaryOf(
    connection: SavedConnection,
    authOf: (id: string) => { signedIn: boolean; method: 'password' | 'device' | null },
  ): ConnectionSummary {
    const auth = authOf(connection.id);
    return {
      id: connection.id,
      kind: connection.kind,
      name: connection.name,
      origin: connection.origin,
      baseUrl: connectionBaseUrl(connection.id),
      pinnedSha256: connection.pinnedSha256,
      signedIn: auth.signedIn,
      signInMethod: auth.method,
    };
  }

  close(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private requireConnection(id: string): SavedConnection {
    const connection = this.options.store.get(id);
    if (!connection) throw new ConnectionStoreError('no such connection');
    return connection;
  }

  private async confirmCertificate(
    origin: string,
    acceptSha256: string,
  ): Promise<CertificateSummary> {
    const accepted = normalizeFingerprint(acceptSha256);
    const certificate = await this.fetchCertificate(origin);
    if (certificate.sha256 !== accepted) {
      throw new ConnectionStoreError(
        `the appliance now presents another certificate (SHA-256 ${certificate.sha256}) than the one accepted (${accepted}): probe it again`,
      );
    }
    return certificate;
  }

  private async fetchCertificate(origin: string): Promise<CertificateSummary> {
    try {
      return await probeCertificate(origin, {
        trustStore: this.options.trustStore,
        ...(this.options.probeTimeoutMs ? { timeoutMs: this.options.probeTimeoutMs } : {}),
      });
    } catch (error) {
      this.options.log(`probing ${origin} failed`, error);
      throw new ConnectionStoreError(`${origin} could not be reached over TLS: ${describe(error)}`);
    }
  }

  private dropStaleAgents(): void {
    for (const [id, cached] of this.agents) {
      const connection = this.options.store.get(id);
      if (!connection || connection.origin !== cached.origin) {
        cached.agent.destroy();
        this.agents.delete(id);
      }
    }
  }
}

export function probeStatus(
  pinnedSha256: string | null,
  certificate: CertificateSummary,
): ProbeResult['status'] {
  if (pinnedSha256 === null) return 'new';
  if (pinnedSha256 === certificate.sha256) return 'unchanged';
  return certificate.trustedByOs ? 'changed-trusted' : 'changed';
}

function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ETIMEDOUT') return 'timed out';
  return error instanceof Error ? error.message : String(error);
}
