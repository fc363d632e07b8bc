/**
 * The one way the appliance runs a system program.
 *
 * Invariants:
 * - A program is started with an argument array, never through a shell, from an absolute path
 *   found on the search path first; a missing program is a ToolMissingError naming the program
 *   and its Debian package, and nothing is spawned.
 * - Each child leads its own process group. On timeout, abort (AbortSignal) or stopAll() the
 *   whole group gets SIGTERM, then SIGKILL after a short grace, so helpers a tool forks
 *   (mtr-packet) end with it.
 * - Output is kept up to a bound per stream (the rest is counted as truncated); complete lines
 *   are handed to the caller as they arrive.
 * - Every live child is listed (liveToolProcesses) and every spawn is announced (onToolSpawn),
 *   so shutdown can end them and tests can see exactly what ran.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { SystemTool } from './system-tools.js';
import { ToolFailure } from './tool-failure.js';

export class ToolMissingError extends ToolFailure {
  constructor(readonly tool: SystemTool) {
    super(`${tool.program} is not installed (Debian package ${tool.debianPackage})`);
  }
}

export class ToolSpawnError extends ToolFailure {}

export interface ToolRunOptions {
  args: readonly string[];
  /** The child (and its group) is ended after this long. */
  timeoutMs: number;
  /** Ends the child (and its group) when aborted. */
  signal?: AbortSignal;
  /** Bytes of stdout and of stderr kept in the result (default 1 MiB each). */
  maxOutputBytes?: number;
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /** Directories searched for the program; also the child's PATH. */
  searchPath?: readonly string[];
  /** Time between SIGTERM and SIGKILL (default 300 ms). */
  killGraceMs?: number;
  /** Variables added to the child's small fixed environment (DEBIAN_FRONTEND for apt-get). */
  extraEnv?: Readonly<Record<string, string>>;
}

export interface ToolResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  durationMs: number;
}

export interface LiveToolProcess {
  pid: number;
  program: string;
  args: readonly string[];
  startedAt: number;
}

export interface ToolProcess extends LiveToolProcess {
  /** Settles when the child has exited and its output is read; rejects only when it could not start. */
  done: Promise<ToolResult>;
  /** Ends the child and its group (same as aborting its signal). */
  stop(): void;
}

const DEFAULT_MAX_OUTPUT = 1_048_576;
/** Longest partial line held while waiting for its newline. */
const MAX_LINE = 65_536;
/** How long to wait for stdio to close after the child exited (a grandchild may hold it open). */
const CLOSE_WAIT_MS = 1_000;

export function defaultSearchPath(): string[] {
  const fromEnv = (process.env.PATH ?? '').split(':').filter(Boolean);
  return [
    ...new Set([
      ...fromEnv,
      '/usr/local/sbin',
      '/usr/local/bin',
      '/usr/sbin',
      '/usr/bin',
      '/sbin',
      '/bin',
    ]),
  ];
}

/** The absolute path of an executable program on the search path, or null. */
export function findProgram(
  program: string,
  searchPath: readonly string[] = defaultSearchPath(),
): string | null {
  if (program.includes('/')) return null;
  for (const dir of searchPath) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return null;
}

/** True while a process runs; a zombie (exited, not yet reaped by a parent) counts as ended. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return stat.slice(close + 2, close + 3) !== 'Z';
  } catch {
    // No procfs: the signal probe above is all there is.
    return true;
  }
}

const live = new Map<number, { info: LiveToolProcess; stop: () => void; done: Promise<unknown> }>();
const spawnListeners = new Set<(process: LiveToolProcess) => void>();

/** Children that are running now (program, arguments, pid). */
export function liveToolProcesses(): LiveToolProcess[] {
  return [...live.values()].map((entry) => entry.info);
}

/** Calls listener for every child started from now on; returns the unsubscribe function. */
export function onToolSpawn(listener: (process: LiveToolProcess) => void): () => void {
  spawnListeners.add(listener);
  return () => spawnListeners.delete(listener);
}

/** Ends every running child (shutdown) and waits for them to exit. */
export async function stopAllToolProcesses(): Promise<void> {
  const entries = [...live.values()];
  for (const entry of entries) entry.stop();
  await Promise.allSettled(entries.map((entry) => entry.done));
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  constructor(private readonly onLine: ((line: string) => void) | undefined) {}

  push(chunk: Buffer): void {
    if (!this.onLine) return;
    this.partial += this.decoder.write(chunk);
    let index: number;
    while ((index = this.partial.indexOf('\n')) !== -1) {
      const line = this.partial.slice(0, index).replace(/\r$/, '');
      this.partial = this.partial.slice(index + 1);
      this.onLine(line);
    }
    if (this.partial.length > MAX_LINE) {
      this.onLine(this.partial);
      this.partial = '';
    }
  }

  end(): void {
    if (!this.onLine) return;
    this.partial += this.decoder.end();
    if (this.partial.length > 0) this.onLine(this.partial.replace(/\r$/, ''));
    this.partial = '';
  }
}

class BoundedText {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Starts a system program. Throws ToolMissingError (nothing spawned) when it is not installed.
 * The returned `done` settles once the child has exited and its output has been read.
 */
export function startTool(tool: SystemTool, options: ToolRunOptions): ToolProcess {
  const searchPath = options.searchPath ?? defaultSearchPath();
  const file = findProgram(tool.program, searchPath);
  if (!file) throw new ToolMissingError(tool);
  for (const arg of options.args) {
    if (typeof arg !== 'string' || arg.includes('\u0000'))
      throw new ToolSpawnError(`argument for ${tool.program} is not a plain string`);
  }
  const startedAt = Date.now();
  const args = [...options.args];
  const child = spawn(file, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    windowsHide: true,
    env: {
      ...options.extraEnv,
      PATH: searchPath.join(':'),
      LC_ALL: 'C',
      LANG: 'C',
      HOME: process.env.HOME ?? '/',
    },
  });

  const stdout = new BoundedText(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
  const stderr = new BoundedText(options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
  const stdoutLines = new LineSplitter(options.onStdoutLine);
  const stderrLines = new LineSplitter(options.onStderrLine);
  let timedOut = false;
  let aborted = false;
  let terminating = false;
  let killTimer: NodeJS.Timeout | null = null;

  const terminate = () => {
    if (terminating) return;
    terminating = true;
    signalGroup(child, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(child, 'SIGKILL'), options.killGraceMs ?? 300);
    killTimer.unref();
  };
  const onAbort = () => {
    aborted = true;
    terminate();
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    terminate();
  }, options.timeoutMs);
  timeout.unref();
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  child.stdout?.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    stdoutLines.push(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    stderrLines.push(chunk);
  });

  const info: LiveToolProcess = { pid: child.pid ?? -1, program: tool.program, args, startedAt };

  const done = new Promise<ToolResult>((resolve, reject) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    const cleanup = () => {
      clearTimeout(timeout);
      options.signal?.removeEventListener('abort', onAbort);
      if (child.pid !== undefined) live.delete(child.pid);
    };
    const finish = () => {
      if (settled || !exit) return;
      settled = true;
      if (killTimer) clearTimeout(killTimer);
      stdoutLines.end();
      stderrLines.end();
      resolve({
        code: exit.code,
        signal: exit.signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        aborted,
        truncated: stdout.truncated || stderr.truncated,
        durationMs: Date.now() - startedAt,
      });
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (exit) return;
      settled = true;
      cleanup();
      reject(
        err.code === 'ENOENT'
          ? new ToolMissingError(tool)
          : new ToolSpawnError(`${tool.program} could not be started: ${err.message}`),
      );
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      cleanup();
      // The group may hold helpers that outlive the leader after a forced stop.
      if (terminating) signalGroup(child, 'SIGKILL');
      const wait = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, CLOSE_WAIT_MS);
      wait.unref();
      child.once('close', () => {
        clearTimeout(wait);
        finish();
      });
    });
  });

  if (child.pid !== undefined) {
    live.set(child.pid, { info, stop: onAbort, done: done.catch(() => undefined) });
    for (const listener of spawnListeners) listener(info);
  }
  return { ...info, done, stop: onAbort };
}

/** Runs a system program to completion (see startTool). */
export function runTool(tool: SystemTool, options: ToolRunOptions): Promise<ToolResult> {
  return startTool(tool, options).done;
}
