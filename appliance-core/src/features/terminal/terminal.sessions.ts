/**
 * Terminal sessions: one pseudo-terminal shell per socket, run as the appliance's own user (a
 * host install makes that a dedicated system user), ended when the socket closes.
 *
 * Invariants: input is written to the shell and never logged; the shell gets a minimal
 * environment (never the appliance's: APPLIANCE_ADMIN_PASSWORD and friends stay out); at most
 * MAX_SESSIONS_PER_USER live sessions per user; every session's start and end are audited
 * (platform/audit: `terminal.open`, `terminal.close` with who, from where, how long), never what
 * was typed.
 */
import fs from 'node:fs';
import os from 'node:os';
import { recordAudit } from '../../platform/audit/audit-log.js';
import type { DB } from '../../platform/db/database.js';

export const MAX_SESSIONS_PER_USER = 2;

/** What the session needs of node-pty (an interface so tests and platforms without it still load). */
export interface Pty {
  onData(listener: (data: string) => void): { dispose(): void };
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): { dispose(): void };
  write(data: string): void;
  resize(cols: number, rows: number): void;
  kill(signal?: string): void;
}

export type PtySpawn = (
  file: string,
  args: string[],
  options: { name: string; cols: number; rows: number; cwd: string; env: Record<string, string> },
) => Pty;

/** The shell: $SHELL when it exists, else bash, else sh. */
export function shellPath(env: NodeJS.ProcessEnv = process.env): string {
  for (const candidate of [env.SHELL, '/bin/bash', '/bin/sh'])
    if (candidate && fs.existsSync(candidate)) return candidate;
  return '/bin/sh';
}

/** The shell's environment: enough for a login-like shell, nothing of the appliance's own. */
export function shellEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const home = os.homedir();
  const user = os.userInfo().username;
  return {
    TERM: 'xterm-256color',
    COLORTERM: 'truecolor',
    HOME: home,
    USER: user,
    LOGNAME: user,
    SHELL: shellPath(env),
    PATH: env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    LANG: env.LANG ?? 'C.UTF-8',
  };
}

export interface SessionInfo {
  id: number;
  userId: number;
  username: string;
  remote: string;
  startedAt: number;
}

export class TerminalSessions {
  private readonly live = new Map<number, SessionInfo>();
  private nextId = 1;

  constructor(
    private readonly spawn: PtySpawn,
    private readonly db: DB,
    private readonly now: () => number,
  ) {}

  private audit(
    info: SessionInfo,
    action: 'open' | 'close',
    detail: Record<string, string | number>,
  ): void {
    recordAudit(
      this.db,
      this.now(),
      { userId: info.userId, name: info.username, tokenId: null, sourceIp: info.remote || null },
      {
        action: `terminal.${action}`,
        outcome: 'success',
        target: { type: 'terminal_session', id: info.id },
        detail,
      },
    );
  }

  countFor(userId: number): number {
    let n = 0;
    for (const s of this.live.values()) if (s.userId === userId) n++;
    return n;
  }

  /** Starts a shell for a user; null when the user already has MAX_SESSIONS_PER_USER. */
  open(
    user: { id: number; username: string },
    remote: string,
    size: { cols: number; rows: number },
  ): { info: SessionInfo; pty: Pty; close: (reason: string) => void } | null {
    if (this.countFor(user.id) >= MAX_SESSIONS_PER_USER) return null;
    const env = shellEnvironment();
    const pty = this.spawn(env.SHELL!, ['-l'], {
      name: 'xterm-256color',
      cols: size.cols,
      rows: size.rows,
      cwd: env.HOME!,
      env,
    });
    const info: SessionInfo = {
      id: this.nextId++,
      userId: user.id,
      username: user.username,
      remote,
      startedAt: this.now(),
    };
    this.live.set(info.id, info);
    this.audit(info, 'open', {});
    let closed = false;
    const close = (reason: string) => {
      if (closed) return;
      closed = true;
      this.live.delete(info.id);
      try {
        pty.kill('SIGHUP');
      } catch {
        // already gone
      }
      this.audit(info, 'close', { reason, duration_ms: this.now() - info.startedAt });
    };
    return { info, pty, close };
  }

  /** Ends every session (appliance shutdown). */
  get size(): number {
    return this.live.size;
  }
}
