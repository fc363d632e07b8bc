/**
 * The `dumpcap` capture engine: Wireshark's own capture process (Debian `wireshark-common`). It
 * writes pcapng itself: a Section Header Block, one Interface Description Block per interface
 * (link type, nanosecond resolution), Enhanced Packet Blocks with capture timestamps and wire
 * lengths, and at the end Interface Statistics Blocks with the drop counts.
 *
 * Started through platform/process (an argument array, never a shell; its own process group):
 * `dumpcap -n -q -i <iface>... [-f <bpf>] -a filesize:<kB> -w <file>`. The capture is running
 * once dumpcap has printed `File: <path>` and the file holds its header; an early exit is read
 * from stderr: an invalid filter or unknown interface is EngineRejected (422), anything else
 * (no permission, missing program) EngineUnavailable (502). Stop is SIGTERM, on which dumpcap
 * writes its statistics blocks and ends; the drop count comes from its summary lines.
 */
import fs from 'node:fs';
import { startTool, ToolMissingError, runTool } from '../../platform/process/spawn.js';
import type { SystemTool } from '../../platform/process/system-tools.js';
import {
  EngineRejected,
  EngineUnavailable,
  oneLine,
  type CaptureEngine,
  type EngineExit,
  type EngineRun,
  type EngineStartOptions,
} from './capture-engine.rules.js';

export const DUMPCAP: SystemTool = { program: 'dumpcap', debianPackage: 'wireshark-common' };

/** Longest a capture may take to reach running (dumpcap opens every interface first). */
const START_TIMEOUT_MS = 10_000;
/** Time dumpcap gets to write its statistics blocks after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** A process that outlives every deadline is ended by platform/process after this long. */
const MAX_RUN_MS = 2 * 86_400_000;

/** Drops summed over dumpcap's `Packets received/dropped on interface 'x': R/D` lines. */
export function dumpcapDrops(stderr: string): number | null {
  let total: number | null = null;
  for (const match of stderr.matchAll(/received\/dropped on interface .*?: (\d+)\/(\d+)/g))
    total = (total ?? 0) + Number(match[2]);
  return total;
}

/** The failure of a dumpcap that ended before capturing, typed from its stderr. */
export function dumpcapStartFailure(stderr: string, code: number | null): Error {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('Capturing on') && !l.startsWith('File:'));
  const text = oneLine(lines.join(' ').replace(/^dumpcap: /, '')) || `dumpcap exited with ${code}`;
  if (/invalid capture filter/i.test(text)) return new EngineRejected('bad-filter', text);
  if (/no (such )?device|no device named|doesn't exist|not up/i.test(text))
    return new EngineRejected('bad-interface', text);
  return new EngineUnavailable(`dumpcap cannot capture: ${text}`);
}

export class DumpcapEngine implements CaptureEngine {
  readonly name = 'dumpcap' as const;

  constructor(private readonly searchPath?: readonly string[]) {}

  async unusable(): Promise<string | null> {
    try {
      // Listing the link types opens the device: it fails without CAP_NET_RAW.
      const result = await runTool(DUMPCAP, {
        args: ['-L', '-i', 'lo'],
        timeoutMs: 5_000,
        ...(this.searchPath ? { searchPath: this.searchPath } : {}),
      });
      if (result.code === 0) return null;
      return `dumpcap cannot capture: ${oneLine(result.stderr.replace(/^dumpcap: /gm, '')) || `exit ${result.code}`}`;
    } catch (err) {
      if (err instanceof ToolMissingError) return err.message;
      return `dumpcap cannot be started: ${(err as Error).message}`;
    }
  }

  async start(options: EngineStartOptions): Promise<EngineRun> {
    // -B: a 16 MiB kernel buffer (the default 2 MiB overflows in bursts past 100,000 packets/s).
    const args = ['-n', '-q', '-B', '16'];
    for (const iface of options.ifaces) args.push('-i', iface);
    if (options.bpf !== '') args.push('-f', options.bpf);
    args.push('-a', `filesize:${Math.max(1, Math.floor(options.byteCap / 1000))}`);
    args.push('-w', options.file);
    let stderr = '';
    let sawFile = false;
    let child;
    try {
      child = startTool(DUMPCAP, {
        args,
        timeoutMs: MAX_RUN_MS,
        killGraceMs: STOP_GRACE_MS,
        maxOutputBytes: 65_536,
        onStderrLine: (line) => {
          if (stderr.length < 65_536) stderr += `${line}\n`;
          if (line.startsWith('File: ')) sawFile = true;
        },
        ...(this.searchPath ? { searchPath: this.searchPath } : {}),
      });
    } catch (err) {
      throw new EngineUnavailable((err as Error).message);
    }
    const exited: Promise<EngineExit> = child.done.then(
      (result) => {
        const drops = dumpcapDrops(result.stderr);
        const stoppedByUs = result.aborted || result.signal === 'SIGTERM';
        const error =
          result.code === 0 || stoppedByUs
            ? null
            : result.signal
              ? `dumpcap was ended by ${result.signal}`
              : oneLine(dumpcapStartFailure(result.stderr, result.code).message);
        return { error, drops };
      },
      (err: Error) => ({ error: oneLine(err.message), drops: null }),
    );
    let ended = false;
    void exited.then(() => {
      ended = true;
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!ended && Date.now() < deadline) {
      if (sawFile && headerWritten(options.file)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    if (ended || !sawFile) {
      child.stop();
      const result = await child.done.catch((err: Error) => ({
        stderr: err.message,
        code: null,
      }));
      throw dumpcapStartFailure(result.stderr || stderr, result.code);
    }
    return {
      pid: child.pid,
      exited,
      stop: async () => {
        child.stop();
        return exited;
      },
    };
  }
}

function headerWritten(file: string): boolean {
  try {
    return fs.statSync(file).size >= 28;
  } catch {
    return false;
  }
}
