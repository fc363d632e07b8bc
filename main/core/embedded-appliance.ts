/**
 * The embedded appliance: appliance-core in a child process (Electron's utilityProcess in the
 * app), its data in `<userData>/appliance`, HTTPS on a free loopback port, its admin password
 * generated on first run and kept by the app (embedded-credentials.ts), its certificate pinned
 * from the ready message (which comes over the trusted IPC channel, not the network), and the
 * app signed in to it as that admin.
 *
 * Lifecycle: start() prepares the environment and waits for the supervisor's ready; every ready
 * (first start, automatic restart after a crash, restart from the window, new collector
 * settings) records the new URL and certificate on the `embedded` connection; sign-in happens on
 * first use and again whenever the appliance stops accepting the token. Quitting stops it
 * cleanly (SIGTERM; the core flushes and exits within 5 s).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import {
  EMBEDDED_CONNECTION_ID,
  type CollectorPorts,
  type CollectorSettings,
  type CoreStatus,
} from '../../electron/contract/bridge.js';
import type { SessionManager } from '../auth/session-manager.js';
import type { ConnectionRegistry } from '../connections/connection-registry.js';
import { UserFacingError } from '../errors.js';
import type { SecretVault } from '../secrets/secret-vault.js';
import {
  chooseCollectorPorts,
  collectorEnv,
  DEFAULT_COLLECTOR_SETTINGS,
  localAddresses,
  type PortProbe,
} from './collector-ports.js';
import {
  CoreSupervisor,
  type CoreReady,
  type CoreSupervisorEvent,
  type CoreSupervisorOptions,
  type ForkCore,
} from './core-supervisor.js';
import { loadEmbeddedCredentials, type EmbeddedCredentials } from './embedded-credentials.js';
import { findMissingTools } from './missing-tools.js';

export interface EmbeddedApplianceOptions {
  /** appliance-core/dist/server.js inside the app. */
  modulePath: string;
  fork: ForkCore;
  userDataDir: string;
  /** The app's environment; APPLIANCE_*, ELECTRON_* and NODE_OPTIONS are not passed on. */
  baseEnv: Record<string, string | undefined>;
  vault: SecretVault;
  connections: ConnectionRegistry;
  sessions: SessionManager;
  log(message: string, error?: unknown): void;
  onStatus?(status: CoreStatus): void;
  platform?: NodeJS.Platform;
  logLevel?: string;
  /** Supervisor timing and clock (tests). */
  supervisor?: Partial<
    Pick<
      CoreSupervisorOptions,
      | 'clock'
      | 'initialRestartDelayMs'
      | 'maxRestartDelayMs'
      | 'maxFailures'
      | 'failureWindowMs'
      | 'readyTimeoutMs'
      | 'stopTimeoutMs'
    >
  >;
  isPortFree?: PortProbe;
}

interface EmbeddedSettings {
  collectors: CollectorSettings;
  /** What the collectors bound last time, reused when free. */
  lastPorts: CollectorPorts;
}

export class EmbeddedApplianceError extends UserFacingError {
  override name = 'EmbeddedApplianceError';
}

export class EmbeddedAppliance {
  readonly dataDir: string;
  private readonly settingsFile: string;
  private readonly supervisor: CoreSupervisor;
  private settings: EmbeddedSettings;
  private credentials: EmbeddedCredentials | undefined;
  private env: Record<string, string> = {};
  private readyPorts: CollectorPorts = {};
  /** Set when the appliance refused the stored password (changed by hand): no retry loop. */
  private passwordRejected = false;

  constructor(private readonly options: EmbeddedApplianceOptions) {
    this.dataDir = path.join(options.userDataDir, 'appliance');
    this.settingsFile = path.join(options.userDataDir, 'embedded-appliance.json');
    this.settings = this.loadSettings();
    this.supervisor = new CoreSupervisor({
      ...options.supervisor,
      modulePath: options.modulePath,
      fork: options.fork,
      forkOptions: () => ({ env: this.env, serviceName: 'Appliance core', stdio: 'pipe' }),
      onEvent: (event) => this.onSupervisorEvent(event),
    });
    options.sessions.setReauthenticator(EMBEDDED_CONNECTION_ID, () => this.signIn());
  }

  /** The appliance's process id while it runs. */
  get pid(): number | undefined {
    return this.supervisor.pid;
  }

  /** Output of the appliance (also in crash reports). */
  get logTail(): string[] {
    return this.supervisor.output.tail();
  }

  async start(): Promise<CoreReady> {
    await this.prepare();
    return this.supervisor.start();
  }

  /** From the window: after a crash it was given up on, or to apply new settings. */
  async restart(): Promise<CoreReady> {
    await this.prepare();
    this.passwordRejected = false;
    return this.supervisor.restart();
  }

  /** Throws EmbeddedApplianceError for an address the collectors cannot bind here. */
  checkCollectorSettings(collectors: CollectorSettings): void {
    if (net.isIP(collectors.bindAddress) === 0) {
      throw new EmbeddedApplianceError('the collectors bind an IP address of this computer');
    }
    if (!localAddresses().includes(collectors.bindAddress)) {
      throw new EmbeddedApplianceError(
        `${collectors.bindAddress} is not an address of this computer`,
      );
    }
  }

  async setCollectors(collectors: CollectorSettings): Promise<CoreReady> {
    this.checkCollectorSettings(collectors);
    this.settings = { ...this.settings, collectors: { ...collectors } };
    this.saveSettings();
    return this.restart();
  }

  stop(): Promise<void> {
    return this.supervisor.stop();
  }

  /** For the proxy: resolves once ready; rejects with a reason when it failed or stopped. */
  async whenReady(timeoutMs = 60_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.supervisor.whenReady(),
        new Promise((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new EmbeddedApplianceError('the embedded appliance is still starting')),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  status(): CoreStatus {
    const state = this.supervisor.state;
    const failure = this.supervisor.lastFailure;
    return {
      connectionId: EMBEDDED_CONNECTION_ID,
      state: state === 'waiting-to-restart' ? 'restarting' : state,
      collectors: {
        ...this.settings.collectors,
        ports: state === 'ready' ? this.readyPorts : {},
      },
      collectorAddresses: localAddresses(),
      failure: failure ? { message: failure.message, logTail: failure.logTail } : null,
      missingTools: findMissingTools(
        this.options.baseEnv.PATH,
        this.options.platform ?? process.platform,
      ),
      passwordStorage:
        this.credentials?.storage ??
        (this.options.vault.persistent ? 'os-keychain' : 'file-in-data-dir'),
    };
  }

  /** Builds the environment of the next start: credentials, data dir, loopback, collectors. */
  private async prepare(): Promise<void> {
    const firstStart = !fs.existsSync(path.join(this.dataDir, 'appliance.db'));
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    this.credentials = loadEmbeddedCredentials(this.options.vault, this.dataDir);
    if (this.credentials.created && !firstStart) {
      this.options.log(
        'embedded appliance: its admin password was lost (the keyring was reset?); sign in to it by hand',
      );
    }
    const { collectors, lastPorts } = this.settings;
    const choice = collectors.enabled
      ? await chooseCollectorPorts(collectors.bindAddress, lastPorts, this.options.isPortFree)
      : { syslog: 0, netflow: 0 };
    this.env = {
      ...inheritedEnv(this.options.baseEnv),
      APPLIANCE_DATA_DIR: this.dataDir,
      APPLIANCE_BIND: '127.0.0.1',
      APPLIANCE_HTTPS_PORT: '0',
      APPLIANCE_LOG_LEVEL: this.options.logLevel ?? 'info',
      // Node 22.1+ (Electron's utility process runs Node 24) keeps compiled modules on disk: most
      // of a warm start is loading appliance-core's modules. Older Node ignores it.
      NODE_COMPILE_CACHE: path.join(this.options.userDataDir, 'compile-cache'),
      ...collectorEnv(collectors, choice),
      // Read on the first start only (it creates user 1); never passed once the database exists.
      ...(firstStart ? { APPLIANCE_ADMIN_PASSWORD: this.credentials.password } : {}),
    };
  }

  private async signIn(): Promise<boolean> {
    const credentials = this.credentials;
    if (!credentials || this.passwordRejected) return false;
    await this.supervisor.whenReady();
    const result = await this.options.sessions.signInWithPassword({
      connectionId: EMBEDDED_CONNECTION_ID,
      username: credentials.username,
      password: credentials.password,
    });
    if (result.status === 'signed-in') return true;
    if (result.status === 'invalid-credentials' || result.status === 'totp-required') {
      this.passwordRejected = true;
      this.options.log(
        `embedded appliance: it refused the stored admin password (${result.status}); sign in to it by hand`,
      );
    } else {
      this.options.log(`embedded appliance: sign-in ${result.status}`);
    }
    return false;
  }

  private onSupervisorEvent(event: CoreSupervisorEvent): void {
    switch (event.type) {
      case 'ready':
        this.options.connections.store.upsertEmbedded(event.url, event.certSha256);
        this.readyPorts = event.ports;
        if (this.settings.collectors.enabled && Object.keys(event.ports).length > 0) {
          this.settings = {
            ...this.settings,
            lastPorts: { ...this.settings.lastPorts, ...event.ports },
          };
          this.saveSettings();
        }
        this.options.log(`embedded appliance ready at ${event.url}`);
        break;
      case 'exit':
        this.options.log(
          `embedded appliance exited with code ${event.code}; last output:\n${event.logTail.slice(-20).join('\n')}`,
        );
        break;
      case 'restarting':
        this.options.log(
          `restarting the embedded appliance in ${event.delayMs} ms: ${event.reason}`,
        );
        break;
      case 'failed':
        this.options.log('embedded appliance given up', event.error);
        break;
    }
    this.options.onStatus?.(this.status());
  }

  private loadSettings(): EmbeddedSettings {
    try {
      const parsed = JSON.parse(
        fs.readFileSync(this.settingsFile, 'utf8'),
      ) as Partial<EmbeddedSettings>;
      const collectors = parsed.collectors;
      return {
        collectors:
          collectors &&
          typeof collectors.enabled === 'boolean' &&
          typeof collectors.bindAddress === 'string'
            ? { enabled: collectors.enabled, bindAddress: collectors.bindAddress }
            : { ...DEFAULT_COLLECTOR_SETTINGS },
        lastPorts:
          typeof parsed.lastPorts === 'object' && parsed.lastPorts !== null ? parsed.lastPorts : {},
      };
    } catch {
      return { collectors: { ...DEFAULT_COLLECTOR_SETTINGS }, lastPorts: {} };
    }
  }

  private saveSettings(): void {
    fs.mkdirSync(path.dirname(this.settingsFile), { recursive: true });
    fs.writeFileSync(this.settingsFile, `${JSON.stringify(this.settings, null, 2)}\n`, {
      mode: 0o600,
    });
  }
}

/** The app's environment minus what would reconfigure the appliance or the Node runtime. */
export function inheritedEnv(baseEnv: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(baseEnv)) {
    if (value === undefined) continue;
    if (key.startsWith('APPLIANCE_') || key.startsWith('ELECTRON_') || key === 'NODE_OPTIONS') {
      continue;
    }
    env[key] = value;
  }
  return env;
}
