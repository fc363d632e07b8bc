/**
 * The agent at run time: its key and state, enrollment (--enroll), check-ins every interval with
 * the 409 override retry (docs/agent-protocol.md §3), the UDP listener (§4 requests, §6 adoption),
 * operations, signed results (§5) and staged updates (§8).
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIP } from 'node:net';

import { Adoption, type Identity } from './adoption.js';
import { type AgentConfig } from './config.js';
import { httpsRequest, signedClient, type HttpOptions } from './http-client.js';
import { loadOrCreateAgentKey, sha256hex, type AgentKey } from './keys.js';
import { DiskReports } from './ops/disk.js';
import { agentArch, OpError, osVersion, performOp, reportedHostname } from './ops/index.js';
import { AgentState, parseBundle, type KeyBundle } from './state.js';
import { installBundle, MAX_BUNDLE_BYTES, verifyUpdate } from './update.js';
import { ReplayCache, verifyRequest, type AgentRequest } from './verify.js';
import { AGENT_VERSION } from './version.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const MAX_RESULT_BYTES = 8 * 1024 * 1024;
export const MAX_ERROR_CHARS = 1000;
export const EXIT_UPDATED = 75;

export type Logger = (event: string, fields?: Record<string, unknown>) => void;

/** JSON lines on stderr. Tokens, adoption keys and private keys are never passed to it. */
export const stderrLogger: Logger = (event, fields = {}) => {
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), event, ...fields }) + '\n');
};

export class EnrollmentRefused extends Error {}

export type CheckinOutcome =
  | { status: 'adopted'; bundle: KeyBundle }
  | { status: 'pending' }
  | { status: 'conflict'; error: string }
  | { status: 'failed'; httpStatus: number; error: string };

export class Agent {
  readonly state: AgentState;
  readonly key: AgentKey;
  private socket: Socket | null = null;
  private readonly replay = new ReplayCache();
  private readonly disk = new DiskReports();
  private readonly adoption: Adoption;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly refusedUpdates = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    readonly config: AgentConfig,
    private readonly log: Logger = stderrLogger,
    private readonly onUpdated: (version: string) => void = () => undefined,
  ) {
    this.state = new AgentState(config.stateDir);
    this.key = loadOrCreateAgentKey(config.stateDir);
    if (config.adoptionKey && !this.state.bundle()) this.state.setAdoptionKey(config.adoptionKey);
    this.adoption = new Adoption(this.state, () => this.identity());
  }

  identity(): Identity {
    return {
      agent_uuid: this.state.agentUuid,
      hostname: reportedHostname(),
      agent_version: AGENT_VERSION,
      os_version: osVersion(),
      arch: agentArch(),
      public_key: this.key.publicB64u,
    };
  }

  private httpOptions(): HttpOptions {
    return {
      trust: {
        ...(this.config.ca ? { ca: this.config.ca } : {}),
        ...(this.config.pin ? { pin: this.config.pin } : {}),
      },
      ...(this.config.bind ? { localAddress: this.config.bind } : {}),
    };
  }

  /** Where requests go: the bundle's `server_url` once there is one, else --server. */
  serverUrl(): string {
    return this.state.bundle()?.server_url ?? this.config.server;
  }

  private client(serverUrl = this.serverUrl()) {
    return signedClient(serverUrl, this.key, this.httpOptions());
  }

  /** Binds the UDP socket; resolves with the bound port (useful with --udp-port 0). */
  async listen(): Promise<number> {
    const bind = this.config.bind ?? '0.0.0.0';
    const socket = createSocket({ type: isIP(bind) === 6 ? 'udp6' : 'udp4' });
    this.socket = socket;
    socket.on('message', (message, remote) => this.onDatagram(message, remote));
    socket.on('error', (error) => this.log('udp.error', { message: error.message }));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.config.udpPort, bind, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const port = socket.address().port;
    this.log('udp.listening', { address: bind, port });
    return port;
  }

  private onDatagram(message: Buffer, remote: RemoteInfo): void {
    const kind = message.length > 5 ? message[5] : 0;
    if (kind === 2 || kind === 4) {
      const outcome = this.adoption.handle(message);
      if (outcome.kind === 'drop') {
        this.log('adoption.dropped', { reason: outcome.reason, from: remote.address });
        return;
      }
      if (outcome.kind === 'adopted')
        this.log('adoption.adopted', {
          device_id: outcome.bundle.device_id,
          server_id: outcome.bundle.server_id,
        });
      this.socket?.send(outcome.bytes, remote.port, remote.address);
      return;
    }
    const verdict = verifyRequest(message, remote.address, {
      bundle: this.state.bundle(),
      agentUuid: this.state.agentUuid,
      cache: this.replay,
      now: Date.now(),
    });
    if (!verdict.ok) {
      this.log('request.dropped', { reason: verdict.reason, from: remote.address });
      return;
    }
    this.track(this.answer(verdict.request));
  }

  private track(work: Promise<unknown>): void {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
  }

  /** Performs a verified request and posts its result (§5). */
  async answer(request: AgentRequest): Promise<void> {
    let result: Record<string, unknown>;
    try {
      const data = await performOp(request.op, request.args, {
        agentUuid: this.state.agentUuid,
        agentVersion: AGENT_VERSION,
        stateDir: this.config.stateDir,
        disk: this.disk,
        ...(this.config.journalFile ? { journalFile: this.config.journalFile } : {}),
      });
      result = { agent_uuid: this.state.agentUuid, request_id: request.request_id, ok: true, data };
      if (Buffer.byteLength(JSON.stringify(result)) > MAX_RESULT_BYTES)
        result = this.failure(request, 'result too large');
    } catch (error) {
      const message =
        error instanceof OpError ? error.message : `operation failed: ${(error as Error).message}`;
      result = this.failure(request, message);
    }
    try {
      const answer = await this.client().post('/api/agent/results', result);
      this.log('request.answered', {
        op: request.op,
        request_id: request.request_id,
        ok: result.ok,
        status: answer.status,
      });
    } catch (error) {
      this.log('results.failed', { op: request.op, message: (error as Error).message });
    }
  }

  private failure(request: AgentRequest, message: string): Record<string, unknown> {
    return {
      agent_uuid: this.state.agentUuid,
      request_id: request.request_id,
      ok: false,
      error: message.slice(0, MAX_ERROR_CHARS),
    };
  }

  private enrolledTokenFile(): string {
    return path.join(this.config.stateDir, 'enrolled-token.sha256');
  }

  /** Whether --enroll names the token this agent already enrolled with (then it is not re-sent). */
  alreadyEnrolledWith(token: string): boolean {
    const file = this.enrolledTokenFile();
    return (
      existsSync(file) &&
      readFileSync(file, 'utf8').trim() === sha256hex(token) &&
      !!this.state.bundle()
    );
  }

  /** POST /api/agent/enroll with the token; throws EnrollmentRefused on 4xx. */
  async enroll(token: string): Promise<KeyBundle> {
    const { agent_uuid, hostname, agent_version, os_version } = this.identity();
    const answer = await this.client(this.config.server).post('/api/agent/enroll', {
      token,
      agent_uuid,
      hostname,
      agent_version,
      os_version,
    });
    const error = (answer.json as { error?: unknown } | null)?.error;
    if (answer.status === 200) {
      const bundle = parseBundle(answer.json);
      if (!bundle) throw new Error('enroll answered a malformed key bundle');
      this.state.storeBundle(bundle, true);
      this.state.deleteAdoptionKey();
      writeFileSync(this.enrolledTokenFile(), sha256hex(token) + '\n', { mode: 0o600 });
      this.log('enroll.ok', { device_id: bundle.device_id, server_id: bundle.server_id });
      return bundle;
    }
    const message = typeof error === 'string' ? error : `HTTP ${answer.status}`;
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429)
      throw new EnrollmentRefused(message);
    throw new Error(`enroll failed: ${message}`);
  }

  /** One check-in; after a 409 one retry with `override: true` (§3). */
  async checkin(): Promise<CheckinOutcome> {
    const { agent_uuid, hostname, agent_version, os_version, arch } = this.identity();
    const body = { agent_uuid, hostname, agent_version, os_version, arch };
    let answer = await this.client().post('/api/agent/checkin', body);
    if (answer.status === 409) {
      this.log('checkin.conflict', { error: (answer.json as { error?: unknown } | null)?.error });
      answer = await this.client().post('/api/agent/checkin', { ...body, override: true });
    }
    const error = (answer.json as { error?: unknown } | null)?.error;
    if (answer.status === 200) {
      const bundle = parseBundle(answer.json);
      if (!bundle) return { status: 'failed', httpStatus: 200, error: 'malformed key bundle' };
      if (!this.state.storeBundle(bundle)) {
        this.log('checkin.bundle_refused', {
          reason: 'server_id differs from the enrolled appliance',
        });
        return { status: 'failed', httpStatus: 200, error: 'bundle names another appliance' };
      }
      this.log('checkin.adopted', { device_id: bundle.device_id });
      if (bundle.update) await this.maybeUpdate(bundle);
      return { status: 'adopted', bundle };
    }
    if (answer.status === 202) {
      this.log('checkin.pending');
      return { status: 'pending' };
    }
    const text = typeof error === 'string' ? error : `HTTP ${answer.status}`;
    this.log('checkin.failed', { status: answer.status, error: text });
    if (answer.status === 409) return { status: 'conflict', error: text };
    return { status: 'failed', httpStatus: answer.status, error: text };
  }

  /** Downloads, verifies and installs an offered update; a failed check leaves this version running. */
  async maybeUpdate(bundle: KeyBundle): Promise<boolean> {
    const offer = bundle.update;
    if (!offer || offer.version === AGENT_VERSION) return false;
    const id = `${offer.version}:${offer.sha256}:${offer.signature}`;
    if (this.refusedUpdates.has(id)) return false;
    try {
      const url = new URL(offer.url, bundle.server_url);
      if (url.origin !== new URL(bundle.server_url).origin)
        throw new Error('update url is not on the appliance');
      const answer = await httpsRequest('GET', url, {}, null, {
        ...this.httpOptions(),
        maxBodyBytes: MAX_BUNDLE_BYTES,
        timeoutMs: 120_000,
      });
      if (answer.status !== 200) throw new Error(`download answered HTTP ${answer.status}`);
      const check = verifyUpdate(offer, answer.body, {
        releaseKey: this.config.releaseKey,
        runningVersion: AGENT_VERSION,
        arch: agentArch(),
      });
      if (!check.ok) throw new Error(check.reason);
      installBundle(answer.body, offer, { stateDir: this.config.stateDir, arch: agentArch() });
      this.log('update.applied', { version: offer.version });
      this.onUpdated(offer.version);
      return true;
    } catch (error) {
      this.refusedUpdates.add(id);
      this.log('update.refused', { version: offer.version, reason: (error as Error).message });
      return false;
    }
  }

  /** Enrolls when asked, then checks in at once and every interval (±10 % jitter). */
  async run(): Promise<void> {
    await this.listen();
    const token = this.config.enrollToken;
    if (token && !this.alreadyEnrolledWith(token)) {
      for (let attempt = 1; !this.stopped; attempt++) {
        try {
          await this.enroll(token);
          break;
        } catch (error) {
          if (error instanceof EnrollmentRefused) throw error;
          this.log('enroll.retry', { attempt, message: (error as Error).message });
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(60_000, 1000 * 2 ** Math.min(attempt, 6))),
          );
        }
      }
    }
    const tick = async () => {
      if (this.stopped) return;
      try {
        await this.checkin();
      } catch (error) {
        this.log('checkin.error', { message: (error as Error).message });
      }
      if (this.stopped) return;
      const jitter = 1 + (Math.random() * 0.2 - 0.1);
      this.timer = setTimeout(() => void tick(), Math.round(this.config.intervalMs * jitter));
    };
    await tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inflight]);
    await new Promise<void>((resolve) =>
      this.socket ? this.socket.close(() => resolve()) : resolve(),
    );
    this.socket = null;
  }
}
