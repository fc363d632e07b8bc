/**
 * The OS upgrader: the program of the netmon-appliance-upgrader package, run as root by the host
 * package's bootstrap unit (netmon-appliance-upgrader.service) only between
 * POST /api/osUpgrade/start and stop.
 *
 * Invariants:
 * - At start it makes one random token (32 bytes, base64url), writes it to its token file (mode
 *   0600, in the unit's RuntimeDirectory, removed with the unit) for the root helper to hand
 *   out once, and keeps only its SHA-256. The token authorizes one upgrade: used once, it is dead.
 * - Its interface (HTTPS with the appliance's own certificate): GET / a page with the form,
 *   POST /upgrade with the token, GET /status the workflow's progress (no secrets).
 * - The upgrade command: the Debian codename in the apt sources is replaced by the target's,
 *   then `apt-get update`, `apt-get -y full-upgrade` (keeping changed configuration files),
 *   then `systemctl reboot`; each program by argument array through the injected runner; a failed
 *   step stops the workflow before the reboot.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { CommandRunner, HelperFiles } from './root-helper.server.js';

/** The next Debian release of each codename the upgrader knows. */
export const NEXT_CODENAME: Readonly<Record<string, string>> = {
  bullseye: 'bookworm',
  bookworm: 'trixie',
  trixie: 'forky',
};

const CODENAME = /^[a-z]{2,20}$/;

export interface UpgradeStep {
  name: string;
  state: 'pending' | 'running' | 'done' | 'failed';
  message?: string;
}

export interface OsUpgraderOptions {
  run: CommandRunner;
  files: HelperFiles;
  tokenFile: string;
  /** The host's codename now, and the one to upgrade to. */
  from: string;
  to: string;
  /** apt source files whose codename is replaced (sources.list and sources.list.d entries). */
  aptSources: readonly string[];
  /** TLS identity; without it plain HTTP (tests only). */
  tls?: { cert: string; key: string };
  randomToken?: () => string;
}

export type WorkflowState = 'idle' | 'running' | 'failed' | 'rebooting';

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest();

/** Replaces the codename as a whole word (bookworm, bookworm-updates, bookworm-security). */
export function rewriteCodename(text: string, from: string, to: string): string {
  return text.replace(new RegExp(`(?<![A-Za-z0-9])${from}(?![A-Za-z0-9])`, 'g'), to);
}

const PAGE = (from: string, to: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Appliance OS upgrade</title></head>
<body><main>
<h1>Operating-system upgrade</h1>
<p>This upgrades the appliance's Debian release from <b>${from}</b> to <b>${to}</b> and then
<b>reboots the appliance</b>. Monitoring stops until it is back.</p>
<form method="post" action="/upgrade">
<label>One-time token <input name="token" type="password" autocomplete="off" required></label>
<button type="submit">Upgrade and reboot</button>
</form>
<p><a href="/status">Progress</a></p>
</main></body></html>
`;

export class OsUpgrader {
  readonly server: http.Server;
  private readonly options: OsUpgraderOptions;
  private tokenHash: Buffer | null = null;
  state: WorkflowState = 'idle';
  readonly steps: UpgradeStep[];
  /** Settles when the workflow has ended (tests await it). */
  workflow: Promise<void> | null = null;

  constructor(options: OsUpgraderOptions) {
    if (!CODENAME.test(options.from) || !CODENAME.test(options.to))
      throw new Error('codenames must be lowercase words');
    this.options = options;
    this.steps = [
      { name: `apt sources: ${options.from} -> ${options.to}`, state: 'pending' },
      { name: 'apt-get update', state: 'pending' },
      { name: 'apt-get full-upgrade', state: 'pending' },
      { name: 'reboot', state: 'pending' },
    ];
    const handler: http.RequestListener = (req, res) => void this.route(req, res);
    this.server = options.tls
      ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler)
      : http.createServer(handler);
  }

  /** Makes the one-time token and writes it to the token file (0600); keeps only its hash. */
  issueToken(): void {
    const token = this.options.randomToken?.() ?? crypto.randomBytes(32).toString('base64url');
    this.tokenHash = sha256(token);
    this.options.files.write(this.options.tokenFile, `${token}\n`, 0o600);
  }

  private accepts(token: unknown): boolean {
    if (typeof token !== 'string' || token.length === 0 || token.length > 256) return false;
    if (!this.tokenHash) return false;
    return crypto.timingSafeEqual(sha256(token), this.tokenHash);
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.setHeader('cache-control', 'no-store');
    const url = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PAGE(this.options.from, this.options.to));
      return;
    }
    if (req.method === 'GET' && url === '/status') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          state: this.state,
          from: this.options.from,
          to: this.options.to,
          steps: this.steps,
        }),
      );
      return;
    }
    if (req.method === 'POST' && url === '/upgrade') {
      const body = await readBody(req, 4096);
      const token =
        body === null
          ? null
          : String(req.headers['content-type'] ?? '').includes('application/json')
            ? safeJsonToken(body)
            : new URLSearchParams(body).get('token');
      if (!this.accepts(token)) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            message:
              'The token is not valid (it is used once; stop and start the upgrader for a new one)',
          }),
        );
        return;
      }
      // One upgrade per token.
      this.tokenHash = null;
      this.workflow = this.runWorkflow();
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          message: 'Upgrade started; the appliance reboots when it is done',
          status: '/status',
        }),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Not found' }));
  }

  private async step(index: number, work: () => Promise<string | null>): Promise<boolean> {
    const step = this.steps[index] as UpgradeStep;
    step.state = 'running';
    const problem = await work().catch((err: unknown) => (err as Error).message);
    if (problem === null) {
      step.state = 'done';
      return true;
    }
    step.state = 'failed';
    step.message = problem.slice(0, 300);
    this.state = 'failed';
    return false;
  }

  private program(program: string, args: readonly string[]) {
    return async () => {
      const result = await this.options.run(program, args);
      if (result.code === 0) return null;
      const line = `${result.stderr}\n${result.stdout}`.split('\n').find((l) => l.trim()) ?? '';
      return `${program} failed: ${line.trim() || `exit code ${String(result.code)}`}`;
    };
  }

  private async runWorkflow(): Promise<void> {
    this.state = 'running';
    const { from, to, files } = this.options;
    const steps: (() => Promise<string | null>)[] = [
      async () => {
        for (const file of this.options.aptSources) {
          const text = files.read(file);
          if (text === null) continue;
          const next = rewriteCodename(text, from, to);
          if (next !== text) files.write(file, next, 0o644);
        }
        return null;
      },
      this.program('apt-get', ['update']),
      this.program('apt-get', [
        '-y',
        '-o',
        'Dpkg::Options::=--force-confdef',
        '-o',
        'Dpkg::Options::=--force-confold',
        'full-upgrade',
      ]),
      async () => {
        this.state = 'rebooting';
        return this.program('systemctl', ['reboot'])();
      },
    ];
    for (let i = 0; i < steps.length; i++) if (!(await this.step(i, steps[i] as never))) return;
  }
}

function readBody(req: http.IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve) => {
    let size = 0;
    let over = false;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is read and dropped, so the refusal still reaches the caller.
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

function safeJsonToken(body: string): unknown {
  try {
    const parsed = JSON.parse(body) as unknown;
    return typeof parsed === 'object' && parsed !== null
      ? (parsed as { token?: unknown }).token
      : null;
  } catch {
    return null;
  }
}

/** The apt source files of a host: sources.list and the .list/.sources files of sources.list.d. */
export function aptSourceFiles(files: HelperFiles, etcApt = '/etc/apt'): string[] {
  const dir = path.join(etcApt, 'sources.list.d');
  return [
    path.join(etcApt, 'sources.list'),
    ...files
      .list(dir)
      .filter((name) => /^[A-Za-z0-9_.-]+\.(list|sources)$/.test(name))
      .map((name) => path.join(dir, name)),
  ];
}
