/**
 * Starts `node appliance-core/dist/server.js` as a separate process, the way `npm start` does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SERVER = path.join(ROOT, 'appliance-core/dist/server.js');

export interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function runServer(
  env: Record<string, string>,
  args: string[] = [],
  options: { command?: string[] } = {},
) {
  const command = options.command ?? [];
  const [file, ...rest] =
    command.length > 0
      ? [...command, process.execPath, SERVER, ...args]
      : [process.execPath, SERVER, ...args];
  const child = spawn(file as string, rest, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      APPLIANCE_BIND: '127.0.0.1',
      APPLIANCE_HTTPS_PORT: '0',
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
      APPLIANCE_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Starts the server and resolves once it prints its listening line. */
export async function startServer(
  env: Record<string, string>,
  args: string[] = [],
  timeoutMs = 20_000,
): Promise<Started> {
  const run = runServer(env, args);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line within ${timeoutMs} ms; stderr: ${run.stderr()}`)),
      timeoutMs,
    );
    const check = () => {
      const match = /appliance listening on (https:\/\/\S+)/.exec(run.stdout());
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    run.child.stdout?.on('data', check);
    void run.exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr: ${run.stderr()}`));
    });
  });
  return { ...run, url };
}

/** Sends SIGTERM and resolves with the exit status and how long it took. */
export async function stopServer(started: { child: ChildProcess; exited: Started['exited'] }) {
  const t0 = Date.now();
  started.child.kill('SIGTERM');
  const result = await started.exited;
  return { ...result, ms: Date.now() - t0 };
}
