/**
 * The one interface both capture engines implement (dumpcap.runtime.ts, cap.runtime.ts), and the
 * typed failures they raise (pure types and small helpers, free of I/O).
 */

export type EngineName = 'dumpcap' | 'cap';

export interface EngineStartOptions {
  ifaces: readonly string[];
  /** One BPF expression ('' captures everything), compiled by capture-filter.rules.ts. */
  bpf: string;
  /** Absolute path of the pcapng file to write (named from the capture id only). */
  file: string;
  /** The engine may stop by itself past this many bytes of file. */
  byteCap: number;
}

export interface EngineExit {
  /** Null when the engine ended normally (stopped, or its own byte-cap stop); else the cause. */
  error: string | null;
  /** Packets the engine or the kernel dropped, when the engine counts them (dumpcap); null otherwise. */
  drops: number | null;
}

export interface EngineRun {
  /** The engine's process id (dumpcap) or null (in process). */
  pid: number | null;
  /** Asks the engine to finish its file and end; settles when it has. */
  stop(): Promise<EngineExit>;
  /** Settles when the engine has ended, for whatever cause. */
  readonly exited: Promise<EngineExit>;
}

export interface CaptureEngine {
  readonly name: EngineName;
  /** Null when the engine can capture here; else why not (missing program, no permission ...). */
  unusable(): Promise<string | null>;
  /** Starts a capture; resolves once the engine captures and the file has its header. */
  start(options: EngineStartOptions): Promise<EngineRun>;
}

/** The engine refused the filter or an interface: the spec's 422 `{status: 'error', reason, message}`. */
export class EngineRejected extends Error {
  constructor(
    readonly reason: 'bad-filter' | 'bad-interface',
    message: string,
  ) {
    super(message);
  }
}

/** The engine cannot capture at all (not installed, not allowed): the spec's 502. */
export class EngineUnavailable extends Error {}

/** Engine output reduced to one line without control characters, bounded (kept as a reason). */
export function oneLine(text: string, max = 300): string {
  const line = [...text]
    .map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? ' ' : c))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
