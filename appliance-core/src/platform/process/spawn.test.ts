import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findProgram,
  isProcessRunning,
  liveToolProcesses,
  onToolSpawn,
  runTool,
  startTool,
  stopAllToolProcesses,
  ToolMissingError,
  ToolSpawnError,
  type LiveToolProcess,
} from './spawn.js';

const NODE = { program: path.basename(process.execPath), debianPackage: 'nodejs' };
const NODE_PATH = [path.dirname(process.execPath)];
const ECHO = { program: 'echo', debianPackage: 'coreutils' };
const SLEEP = { program: 'sleep', debianPackage: 'coreutils' };
const HEAD = { program: 'head', debianPackage: 'coreutils' };

const alive = isProcessRunning;

async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return condition();
}

/** A node child that starts a grandchild `sleep 30` in its process group and prints its pid. */
const FORKING_SCRIPT = `
const { spawn } = require('node:child_process');
const g = spawn('sleep', ['30'], { stdio: 'ignore' });
console.log('grandchild ' + g.pid);
setInterval(() => {}, 1000);
`;

afterEach(async () => {
  await stopAllToolProcesses();
});

describe('startTool / runTool', () => {
  it('passes arguments as an array, never through a shell', async () => {
    const result = await runTool(ECHO, {
      args: ['$(id)', ';', 'id', '|', '`id`', '-n'],
      timeoutMs: 5000,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('$(id) ; id | `id` -n\n');
    expect(result.timedOut).toBe(false);
    expect(result.aborted).toBe(false);
  });

  it('reports a missing program by name and Debian package, and spawns nothing', () => {
    const seen: LiveToolProcess[] = [];
    const off = onToolSpawn((p) => seen.push(p));
    try {
      expect(() =>
        startTool(
          { program: 'no-such-tool-xyz', debianPackage: 'no-such-package' },
          { args: [], timeoutMs: 1000 },
        ),
      ).toThrow(
        new ToolMissingError({ program: 'no-such-tool-xyz', debianPackage: 'no-such-package' }),
      );
      const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'no-tools-'));
      expect(() => startTool(SLEEP, { args: ['1'], timeoutMs: 1000, searchPath: [empty] })).toThrow(
        'sleep is not installed (Debian package coreutils)',
      );
      expect(seen).toEqual([]);
    } finally {
      off();
    }
  });

  it('refuses program names with a slash and arguments with NUL bytes', () => {
    expect(findProgram('/bin/sleep')).toBeNull();
    expect(findProgram('sleep')).toMatch(/\/sleep$/);
    expect(() => startTool(ECHO, { args: ['a\u0000b'], timeoutMs: 1000 })).toThrow(ToolSpawnError);
  });

  it('ends a child that runs past its timeout', async () => {
    const t0 = Date.now();
    const run = startTool(SLEEP, { args: ['30'], timeoutMs: 200 });
    const result = await run.done;
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGTERM');
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(alive(run.pid)).toBe(false);
  });

  it('ends the child and its whole process group on abort', async () => {
    const controller = new AbortController();
    let grandchild = 0;
    const run = startTool(NODE, {
      args: ['-e', FORKING_SCRIPT],
      timeoutMs: 20_000,
      signal: controller.signal,
      searchPath: NODE_PATH,
      onStdoutLine: (line) => {
        const match = /^grandchild (\d+)$/.exec(line);
        if (match) grandchild = Number(match[1]);
      },
    });
    expect(await waitUntil(() => grandchild > 0, 10_000)).toBe(true);
    expect(alive(grandchild)).toBe(true);
    expect(liveToolProcesses().map((p) => p.pid)).toContain(run.pid);
    const t0 = Date.now();
    controller.abort();
    const result = await run.done;
    expect(result.aborted).toBe(true);
    expect(await waitUntil(() => !alive(run.pid) && !alive(grandchild), 1000)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(liveToolProcesses().map((p) => p.pid)).not.toContain(run.pid);
  });

  it('does not start work for a signal that is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(SLEEP, {
      args: ['30'],
      timeoutMs: 20_000,
      signal: controller.signal,
    });
    expect(result.aborted).toBe(true);
    expect(result.durationMs).toBeLessThan(5000);
  });

  it('hands over lines as they arrive, before the child exits', async () => {
    const script =
      "let i = 0; const t = setInterval(() => { console.log('line ' + i); if (++i === 3) { clearInterval(t); } }, 150); process.stdout.write('partial');";
    const arrivals: { line: string; at: number }[] = [];
    const run = startTool(NODE, {
      args: ['-e', script],
      timeoutMs: 10_000,
      searchPath: NODE_PATH,
      onStdoutLine: (line) => arrivals.push({ line, at: Date.now() }),
    });
    const result = await run.done;
    const exitedAt = Date.now();
    expect(arrivals.map((a) => a.line)).toEqual(['partialline 0', 'line 1', 'line 2']);
    expect(arrivals[0]!.at).toBeLessThan(arrivals[2]!.at);
    expect(arrivals[0]!.at).toBeLessThan(exitedAt);
    expect(result.stdout).toBe('partialline 0\nline 1\nline 2\n');
  });

  it('streams stderr lines too, and keeps the exit code', async () => {
    const lines: string[] = [];
    const result = await runTool(NODE, {
      args: ['-e', "console.error('oops'); process.exit(3)"],
      timeoutMs: 10_000,
      searchPath: NODE_PATH,
      onStderrLine: (l) => lines.push(l),
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('oops\n');
    expect(lines).toEqual(['oops']);
  });

  it('keeps at most maxOutputBytes of output and says so', async () => {
    const result = await runTool(HEAD, {
      args: ['-c', '3000000', '/dev/zero'],
      timeoutMs: 10_000,
      maxOutputBytes: 1000,
    });
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBe(1000);
    expect(result.truncated).toBe(true);
  });

  it('announces every spawn and lists live children; stopAllToolProcesses ends them', async () => {
    const seen: LiveToolProcess[] = [];
    const off = onToolSpawn((p) => seen.push(p));
    const a = startTool(SLEEP, { args: ['30'], timeoutMs: 20_000 });
    const b = startTool(SLEEP, { args: ['31'], timeoutMs: 20_000 });
    off();
    expect(seen.map((p) => [p.program, p.args])).toEqual([
      ['sleep', ['30']],
      ['sleep', ['31']],
    ]);
    expect(
      liveToolProcesses()
        .map((p) => p.pid)
        .sort(),
    ).toEqual([a.pid, b.pid].sort());
    await stopAllToolProcesses();
    expect((await a.done).aborted).toBe(true);
    expect((await b.done).aborted).toBe(true);
    expect(liveToolProcesses()).toEqual([]);
  });
});
