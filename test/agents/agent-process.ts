/**
 * The real agent (agent/dist/cli.js, built by buildAgent) as a child process for the end-to-end
 * tests: its JSON log lines on stderr are collected, and a test waits for an event with a bound.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import path from 'node:path';
import { connect } from 'node:tls';

import { ROOT } from '../harness/process.js';

export const AGENT_CLI = path.join(ROOT, 'agent/dist/cli.js');
export const AGENT_FIXTURES = path.join(ROOT, 'agent/test/fixtures');

export function buildAgent(): void {
  const result = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'agent'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (result.status !== 0)
    throw new Error(`building the agent failed:\n${result.stdout}${result.stderr}`);
}

/** SHA-256 fingerprint of the certificate a TLS server on 127.0.0.1 presents (for --pin). */
export async function certificateFingerprint(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: hostname, port: Number(port), rejectUnauthorized: false },
      () => {
        const fp = socket.getPeerCertificate().fingerprint256;
        socket.end();
        resolve(fp);
      },
    );
    socket.once('error', reject);
  });
}

export interface LogLine {
  event: string;
  [key: string]: unknown;
}

export interface AgentProcess {
  child: ChildProcess;
  bind: string;
  lines: LogLine[];
  stderr(): string;
  exited: Promise<number | null>;
  waitFor(event: string, match?: (line: LogLine) => boolean, ms?: number): Promise<LogLine>;
  stop(): Promise<void>;
}

export function startAgent(options: {
  server: string;
  stateDir: string;
  bind: string;
  udpPort: number;
  pin: string;
  args?: string[];
  env?: Record<string, string>;
}): AgentProcess {
  const child = spawn(
    process.execPath,
    [
      AGENT_CLI,
      '--server',
      options.server,
      '--state-dir',
      options.stateDir,
      '--bind',
      options.bind,
      '--udp-port',
      String(options.udpPort),
      '--pin',
      options.pin,
      '--interval',
      '1',
      ...(options.args ?? []),
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const lines: LogLine[] = [];
  let raw = '';
  let pending = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    raw += chunk;
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part) as LogLine);
      } catch {
        lines.push({ event: 'text', text: part });
      }
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    child,
    bind: options.bind,
    lines,
    stderr: () => raw,
    exited,
    async waitFor(event, match = () => true, ms = 15_000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = lines.find((line) => line.event === event && match(line));
        if (found) return found;
        if (Date.now() > until || child.exitCode !== null)
          throw new Error(`agent on ${options.bind}: no ${event} within ${ms} ms; stderr:\n${raw}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/**
 * A UDP relay standing for a host at `address`: datagrams to address:port go to the agent at
 * target:port (sent from 127.0.0.1, the appliance's address, so the agent accepts them), answers
 * come back from address:port. `drop(kind)` decides which datagrams (by the protocol's kind byte)
 * it loses, to play a lossy path; `seen` keeps every datagram it forwarded, for replays.
 */
export async function startRelay(
  address: string,
  port: number,
  target: string,
  drop: (kind: number) => boolean,
  options: { dropAnswer?: (kind: number) => boolean } = {},
): Promise<{ close(): Promise<void>; dropped: number[]; seen: Buffer[] }> {
  const front: Socket = createSocket('udp4');
  const back: Socket = createSocket('udp4');
  const dropped: number[] = [];
  const seen: Buffer[] = [];
  let client: { address: string; port: number } | null = null;
  front.on('message', (msg, rinfo) => {
    const kind = msg[5] ?? 0;
    if (drop(kind)) {
      dropped.push(kind);
      return;
    }
    client = { address: rinfo.address, port: rinfo.port };
    seen.push(Buffer.from(msg));
    back.send(msg, port, target);
  });
  back.on('message', (msg) => {
    if (options.dropAnswer?.(msg[5] ?? 0)) return;
    if (client) front.send(msg, client.port, client.address);
  });
  await new Promise<void>((resolve) => front.bind(port, address, resolve));
  await new Promise<void>((resolve) => back.bind(0, '127.0.0.1', resolve));
  return {
    dropped,
    seen,
    async close() {
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await new Promise<void>((resolve) => back.close(() => resolve()));
    },
  };
}
