/**
 * The root helper: the one small program that runs as root (netmon-appliance-root-helper.service)
 * and makes, on the appliance's request, the host changes the hardened appliance service may not
 * make itself. Protocol: platform/host/root-helper.protocol.ts (one JSON line in, one out).
 *
 * Invariants:
 * - Every request is validated again here (root-helper.rules.ts): unknown ops and fields are
 *   refused, nothing is coerced, and a refused request runs nothing.
 * - Programs run through the injected CommandRunner with argument arrays; the default runner is
 *   the platform's spawn helper (never a shell) and runs only the programs of HELPER_PROGRAMS.
 * - Units: service.action acts only on the units of `allowedUnits`, by exact name.
 * - network.apply writes one ifupdown file, restarts networking, and restores the previous file
 *   by itself unless network.confirm arrives within confirmSeconds.
 * - The upgrader's one-time token is read from its token file and the file is removed at once:
 *   the helper hands a token out once; it never logs one.
 * - Access: the socket is 0660, owned by root and the appliance's group (systemd's socket unit,
 *   or listenRootHelper's chmod/chown). Node has no SO_PEERCRED API, so the file mode and group
 *   are the peer check (see docs/features/host-package.md).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  ROOT_HELPER_MAX_REQUEST,
  type NetworkInterfaceConfig,
  type RootHelperRequest,
  type RootHelperResponse,
} from '../platform/host/root-helper.protocol.js';
import {
  Refusal,
  parseRequest,
  renderInterfaces,
  renderTimesyncd,
  UPGRADER_DEB,
  UPGRADER_TOKEN,
} from './root-helper.rules.js';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program with an argument array (never a shell) and returns how it ended. */
export type CommandRunner = (program: string, args: readonly string[]) => Promise<CommandResult>;

/** The host files the helper reads and writes (injected in tests: a temp directory). */
export interface HelperFiles {
  read(file: string): string | null;
  write(file: string, content: string, mode: number): void;
  remove(file: string): void;
  list(dir: string): string[];
}

export const realFiles: HelperFiles = {
  read: (file) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return null;
    }
  },
  write: (file, content, mode) => {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    const tmp = `${file}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, content, { mode });
    fs.renameSync(tmp, file);
  },
  remove: (file) => fs.rmSync(file, { force: true }),
  list: (dir) => {
    try {
      return fs.readdirSync(dir);
    } catch {
      return [];
    }
  },
};

export const UPGRADER_PACKAGE = 'netmon-appliance-upgrader';
export const UPGRADER_UNIT = 'netmon-appliance-upgrader.service';
export const APPLIANCE_UNIT = 'netmon-appliance.service';

/** Units service.action may act on. */
export const DEFAULT_ALLOWED_UNITS: readonly string[] = [
  APPLIANCE_UNIT,
  UPGRADER_UNIT,
  'systemd-timesyncd.service',
  'networking.service',
  'ssh.service',
  'suricata.service',
];

export interface HelperPaths {
  /** The ifupdown file network.apply owns. */
  networkFile: string;
  /** The systemd-timesyncd drop-in ntp.set owns. */
  timesyncdFile: string;
  /** Where the host package bundles the upgrader's .deb. */
  upgraderPackageDir: string;
  /** Where the upgrader writes its one-time token when it starts. */
  upgraderTokenFile: string;
  /** The upgrader's environment file (UPGRADER_PORT). */
  upgraderEnvFile: string;
  osRelease: string;
  zoneinfo: string;
}

export const DEFAULT_PATHS: HelperPaths = {
  networkFile: '/etc/network/interfaces.d/netmon-appliance',
  timesyncdFile: '/etc/systemd/timesyncd.conf.d/netmon-appliance.conf',
  upgraderPackageDir: '/usr/lib/netmon-appliance/upgrader',
  upgraderTokenFile: '/run/netmon-appliance-upgrader/token',
  upgraderEnvFile: '/etc/netmon-appliance/upgrader.env',
  osRelease: '/etc/os-release',
  zoneinfo: '/usr/share/zoneinfo',
};

export const DEFAULT_UPGRADER_PORT = 8444;

export interface TimerApi {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface RootHelperOptions {
  run: CommandRunner;
  files?: HelperFiles;
  paths?: Partial<HelperPaths>;
  allowedUnits?: readonly string[];
  /** Milliseconds in one second of confirmSeconds (tests shorten it). */
  secondMs?: number;
  timers?: TimerApi;
  /** How long upgrader.start waits for the token file, and how often it looks. */
  tokenWait?: { attempts: number; intervalMs: number };
  /** One line per request (op and outcome; never arguments of secrets). */
  log?: (line: string) => void;
  /**
   * Whether the host runs systemd (sd_booted: /run/systemd/system exists). Without it
   * hostname.set uses `hostname NAME` instead of hostnamectl (see setHostname).
   */
  systemdBooted?: () => boolean;
}

/** sd_booted(3): systemd is the running init when /run/systemd/system is a directory. */
export const systemdBooted = (): boolean => {
  try {
    return fs.statSync('/run/systemd/system').isDirectory();
  } catch {
    return false;
  }
};

const ok = (output?: unknown): RootHelperResponse =>
  output === undefined ? { ok: true } : { ok: true, output };
const refused = (message: string): RootHelperResponse => ({ ok: false, code: 'refused', message });
const failed = (message: string): RootHelperResponse => ({ ok: false, code: 'failed', message });
const unsupported = (message: string): RootHelperResponse => ({
  ok: false,
  code: 'unsupported',
  message,
});

/** The first non-empty stderr (or stdout) line of a program, bounded: the failure's message. */
export function firstLine(result: CommandResult): string {
  const line = `${result.stderr}\n${result.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return (line ?? `exited with code ${String(result.code)}`).slice(0, 200);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PendingNetwork {
  previous: string | null;
  timer: unknown;
}

export class RootHelper {
  private readonly run: CommandRunner;
  private readonly files: HelperFiles;
  readonly paths: HelperPaths;
  private readonly allowedUnits: ReadonlySet<string>;
  private readonly secondMs: number;
  private readonly timers: TimerApi;
  private readonly tokenWait: { attempts: number; intervalMs: number };
  private readonly log: (line: string) => void;
  private readonly systemdBooted: () => boolean;
  private pending: PendingNetwork | null = null;
  /** Settles when the last rollback (timer or request) has finished; tests await it. */
  lastRollback: Promise<RootHelperResponse> | null = null;
  /** Requests are handled one at a time: host changes never interleave. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: RootHelperOptions) {
    this.run = options.run;
    this.files = options.files ?? realFiles;
    this.paths = { ...DEFAULT_PATHS, ...options.paths };
    this.allowedUnits = new Set(options.allowedUnits ?? DEFAULT_ALLOWED_UNITS);
    this.secondMs = options.secondMs ?? 1000;
    this.timers = options.timers ?? {
      setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    };
    this.tokenWait = options.tokenWait ?? { attempts: 50, intervalMs: 100 };
    this.log = options.log ?? (() => undefined);
    this.systemdBooted = options.systemdBooted ?? systemdBooted;
  }

  /** True while a network change waits for network.confirm. */
  get networkPending(): boolean {
    return this.pending !== null;
  }

  /** Validates and carries out one request (already parsed from JSON). Never throws. */
  handle(raw: unknown): Promise<RootHelperResponse> {
    const next = this.queue.then(() => this.handleNow(raw));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async handleNow(raw: unknown): Promise<RootHelperResponse> {
    let request: RootHelperRequest;
    try {
      request = parseRequest(raw);
    } catch (err) {
      const message = err instanceof Refusal ? err.message : 'malformed request';
      this.log(`refused: ${message}`);
      return refused(message);
    }
    let answer: RootHelperResponse;
    try {
      answer = await this.dispatch(request);
    } catch (err) {
      answer = failed(
        `${request.op} failed: ${(err as Error).message.split('\n')[0]?.slice(0, 200)}`,
      );
    }
    this.log(`${request.op}: ${answer.ok ? 'ok' : `${answer.code}: ${answer.message}`}`);
    return answer;
  }

  private async runOk(
    program: string,
    args: readonly string[],
    what: string,
  ): Promise<RootHelperResponse> {
    const result = await this.run(program, args);
    return result.code === 0 ? ok() : failed(`${what}: ${firstLine(result)}`);
  }

  private dispatch(request: RootHelperRequest): Promise<RootHelperResponse> {
    switch (request.op) {
      case 'hostname.set':
        return this.setHostname(request.args.hostname);
      case 'time.set':
        return this.runOk('date', ['-u', `--set=@${request.args.unix}`], 'date');
      case 'timezone.set':
        return this.setTimezone(request.args.tz);
      case 'ntp.set':
        return this.setNtp(request.args.servers);
      case 'network.apply':
        return this.applyNetwork(request.args.interfaces, request.args.confirmSeconds);
      case 'network.confirm':
        return this.confirmNetwork();
      case 'network.rollback':
        return this.rollbackRequested();
      case 'service.action':
        return this.serviceAction(request.args.unit, request.args.action);
      case 'upgrader.status':
        return this.upgraderStatus();
      case 'upgrader.install':
        return this.upgraderInstall();
      case 'upgrader.start':
        return this.upgraderStart();
      case 'upgrader.stop':
        return this.upgraderStop();
    }
  }

  /**
   * Under systemd: `hostnamectl set-hostname` (the kernel's name and /etc/hostname, through
   * systemd-hostnamed). Without systemd (a container, a UTS namespace) hostnamectl cannot work,
   * so `hostname NAME` sets the running kernel's name (sethostname(2), in the helper's own UTS
   * namespace) and /etc/hostname is left as it is: the answer's output says `persisted: false`.
   */
  private async setHostname(name: string): Promise<RootHelperResponse> {
    if (this.systemdBooted())
      return this.runOk('hostnamectl', ['set-hostname', name], 'hostnamectl');
    const result = await this.run('hostname', [name]);
    return result.code === 0
      ? ok({ method: 'sethostname', persisted: false })
      : failed(`hostname: ${firstLine(result)}`);
  }

  private async setTimezone(tz: string): Promise<RootHelperResponse> {
    const file = path.join(this.paths.zoneinfo, tz);
    if (!file.startsWith(`${this.paths.zoneinfo}/`) || this.files.read(file) === null)
      return refused('tz is not a time zone of this host');
    return this.runOk('timedatectl', ['set-timezone', tz], 'timedatectl');
  }

  private async setNtp(servers: readonly string[]): Promise<RootHelperResponse> {
    if (servers.length === 0) this.files.remove(this.paths.timesyncdFile);
    else this.files.write(this.paths.timesyncdFile, renderTimesyncd(servers), 0o644);
    return this.runOk('systemctl', ['restart', 'systemd-timesyncd.service'], 'systemctl');
  }

  private restoreNetworkFile(previous: string | null): void {
    if (previous === null) this.files.remove(this.paths.networkFile);
    else this.files.write(this.paths.networkFile, previous, 0o644);
  }

  private async applyNetwork(
    interfaces: readonly NetworkInterfaceConfig[],
    confirmSeconds: number,
  ): Promise<RootHelperResponse> {
    if (this.pending) return refused('a network change is waiting for confirmation');
    const previous = this.files.read(this.paths.networkFile);
    this.files.write(this.paths.networkFile, renderInterfaces(interfaces), 0o644);
    const restart = await this.run('systemctl', ['restart', 'networking.service']);
    if (restart.code !== 0) {
      this.restoreNetworkFile(previous);
      await this.run('systemctl', ['restart', 'networking.service']);
      return failed(
        `networking restart failed, previous configuration restored: ${firstLine(restart)}`,
      );
    }
    const pending: PendingNetwork = { previous, timer: null };
    pending.timer = this.timers.setTimeout(() => {
      if (this.pending !== pending) return;
      this.log('network.apply: not confirmed in time, rolling back');
      this.lastRollback = this.handleQueued(() => this.rollbackNetwork());
    }, confirmSeconds * this.secondMs);
    this.pending = pending;
    return ok({ pending: true, confirmSeconds });
  }

  /** Runs fn in the request queue (the rollback timer must not interleave with a request). */
  private handleQueued(fn: () => Promise<RootHelperResponse>): Promise<RootHelperResponse> {
    const next = this.queue.then(fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async confirmNetwork(): Promise<RootHelperResponse> {
    if (!this.pending) return refused('no network change is waiting for confirmation');
    this.timers.clearTimeout(this.pending.timer);
    this.pending = null;
    return ok();
  }

  private async rollbackRequested(): Promise<RootHelperResponse> {
    if (!this.pending) return refused('no network change is waiting for confirmation');
    const answer = await this.rollbackNetwork();
    this.lastRollback = Promise.resolve(answer);
    return answer;
  }

  private async rollbackNetwork(): Promise<RootHelperResponse> {
    const pending = this.pending;
    if (!pending) return ok();
    this.timers.clearTimeout(pending.timer);
    this.pending = null;
    this.restoreNetworkFile(pending.previous);
    return this.runOk(
      'systemctl',
      ['restart', 'networking.service'],
      'networking restart after rollback',
    );
  }

  private async serviceAction(unit: string, action: string): Promise<RootHelperResponse> {
    if (!this.allowedUnits.has(unit)) return refused('unit is not on the helper allowlist');
    // The appliance restarting itself: answer before systemd stops the caller.
    const args = unit === APPLIANCE_UNIT ? ['--no-block', action, unit] : [action, unit];
    return this.runOk('systemctl', args, 'systemctl');
  }

  private bundledUpgrader(): string | null {
    const names = this.files
      .list(this.paths.upgraderPackageDir)
      .filter((name) => UPGRADER_DEB.test(name))
      .sort();
    const newest = names.at(-1);
    return newest ? path.join(this.paths.upgraderPackageDir, newest) : null;
  }

  private async upgraderInstalled(): Promise<boolean> {
    const result = await this.run('dpkg-query', ['-W', '-f=${Status}', UPGRADER_PACKAGE]);
    return result.code === 0 && result.stdout.includes('install ok installed');
  }

  private codename(): string {
    const text = this.files.read(this.paths.osRelease) ?? '';
    const match = /^VERSION_CODENAME=("?)([A-Za-z0-9._-]*)\1\s*$/m.exec(text);
    return match?.[2] ?? '';
  }

  private upgraderPort(): number {
    const text = this.files.read(this.paths.upgraderEnvFile) ?? '';
    const match = /^UPGRADER_PORT=(\d{1,5})\s*$/m.exec(text);
    const port = match ? Number(match[1]) : DEFAULT_UPGRADER_PORT;
    return port >= 1 && port <= 65535 ? port : DEFAULT_UPGRADER_PORT;
  }

  private async systemctlWord(verb: 'is-active' | 'is-enabled'): Promise<string> {
    const result = await this.run('systemctl', [verb, UPGRADER_UNIT]);
    const word = result.stdout.trim().split('\n')[0] ?? '';
    return /^[a-z-]{1,32}$/.test(word) ? word : 'unknown';
  }

  private async upgraderStatus(): Promise<RootHelperResponse> {
    const installed = await this.upgraderInstalled();
    return ok({
      codename: this.codename(),
      upgrader_installed: installed,
      upgrader_active: installed ? await this.systemctlWord('is-active') : 'inactive',
      upgrader_enabled: installed ? await this.systemctlWord('is-enabled') : 'disabled',
      upgrader_package_available: this.bundledUpgrader() !== null,
      upgrader_port: this.upgraderPort(),
    });
  }

  private async upgraderInstall(): Promise<RootHelperResponse> {
    if (await this.upgraderInstalled()) return ok({ already_installed: true });
    const deb = this.bundledUpgrader();
    if (!deb) return unsupported('No upgrader package is bundled with this appliance');
    const result = await this.run('apt-get', ['install', '-y', '--no-install-recommends', deb]);
    if (result.code !== 0) return failed(`Installing the upgrader failed: ${firstLine(result)}`);
    return ok({ already_installed: false });
  }

  private async upgraderStart(): Promise<RootHelperResponse> {
    if (!(await this.upgraderInstalled())) return unsupported('The upgrader is not installed');
    const start = await this.run('systemctl', ['start', UPGRADER_UNIT]);
    if (start.code !== 0)
      return failed(`The upgrader service failed to start: ${firstLine(start)}`);
    for (let i = 0; i < this.tokenWait.attempts; i++) {
      const text = this.files.read(this.paths.upgraderTokenFile);
      if (text !== null) {
        // Handed out once: the next start must come after a stop (a fresh upgrader, a fresh token).
        this.files.remove(this.paths.upgraderTokenFile);
        const token = text.trim();
        if (!UPGRADER_TOKEN.test(token)) return failed('The upgrader token file is unreadable');
        return ok({ token, port: this.upgraderPort() });
      }
      await sleep(this.tokenWait.intervalMs);
    }
    return failed('The upgrader token file is unreadable');
  }

  private async upgraderStop(): Promise<RootHelperResponse> {
    this.files.remove(this.paths.upgraderTokenFile);
    if (!(await this.upgraderInstalled())) return ok();
    return this.runOk('systemctl', ['stop', UPGRADER_UNIT], 'The upgrader service failed to stop');
  }
}

/**
 * Serves the helper on a Unix socket: one JSON line in, one JSON line out, then close. A request
 * past ROOT_HELPER_MAX_REQUEST bytes, or without its newline within `idleMs`, is refused.
 */
export function serveRootHelper(
  helper: Pick<RootHelper, 'handle'>,
  options: { idleMs?: number } = {},
): net.Server {
  const idleMs = options.idleMs ?? 10_000;
  return net.createServer((socket) => {
    let buffer = Buffer.alloc(0);
    let answered = false;
    const answer = (response: RootHelperResponse) => {
      if (answered) return;
      answered = true;
      socket.end(`${JSON.stringify(response)}\n`);
    };
    socket.setTimeout(idleMs, () => {
      answer(refused('request timed out'));
      socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      buffer = Buffer.concat([buffer, chunk]);
      const newline = buffer.indexOf(0x0a);
      if (newline === -1) {
        if (buffer.length > ROOT_HELPER_MAX_REQUEST) answer(refused('request too large'));
        return;
      }
      if (newline > ROOT_HELPER_MAX_REQUEST) return answer(refused('request too large'));
      let parsed: unknown;
      try {
        parsed = JSON.parse(buffer.subarray(0, newline).toString('utf8'));
      } catch {
        return answer(refused('request is not JSON'));
      }
      socket.pause();
      void helper.handle(parsed).then(answer, () => answer(failed('internal error')));
    });
  });
}

/**
 * Listens on the socket systemd passed (LISTEN_FDS, socket activation) or, without one, on
 * `socketPath` made 0660 and, when `gid` is given, owned by root and that group.
 */
export async function listenRootHelper(
  server: net.Server,
  where: { systemdFd?: number; socketPath?: string; gid?: number },
): Promise<void> {
  if (where.systemdFd !== undefined) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ fd: where.systemdFd }, () => resolve());
    });
    return;
  }
  const socketPath = where.socketPath;
  if (!socketPath) throw new Error('no socket to listen on');
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o750 });
  fs.rmSync(socketPath, { force: true });
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
  } finally {
    process.umask(oldMask);
  }
  fs.chmodSync(socketPath, 0o660);
  if (where.gid !== undefined) fs.chownSync(socketPath, 0, where.gid);
}
