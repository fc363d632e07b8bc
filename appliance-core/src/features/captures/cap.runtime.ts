/**
 * The `cap` capture engine: libpcap in this process through the optional dependency `cap`
 * (0.2.x, NAN, built from source against libpcap). Used when dumpcap is missing or may not
 * capture (APPLIANCE_CAPTURE_ENGINE=auto), or when chosen (=cap).
 *
 * `cap` hands each packet to JavaScript with its captured length only, so this engine writes the
 * pcapng itself: an SHB, one IDB per interface (its link type, microsecond resolution, the
 * interface name), and one EPB per packet whose timestamp is taken on receipt in JavaScript (not
 * the kernel's capture time: packets delivered in one batch share nearly the same time), whose
 * original length equals the captured length (no wire length), and no drop counter (`drops` is
 * null). It lost 0.1-0.4 % of packets at 100,000 a second and more above on the reference
 * machine (docs/features/captures.md).
 *
 * Blocks are buffered and appended to the file every 50 ms or 256 KiB, so the chunk splitter
 * always finds whole blocks after the header.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import {
  EngineRejected,
  EngineUnavailable,
  oneLine,
  type CaptureEngine,
  type EngineExit,
  type EngineRun,
  type EngineStartOptions,
} from './capture-engine.rules.js';
import { namespaceInterfaces } from './capture-interfaces.service.js';
import { EPB_TYPE, IDB_TYPE, SHB_TYPE } from './pcapng.rules.js';

interface CapHandle {
  open(device: string, filter: string, bufSize: number, buffer: Buffer): string;
  close(): void;
  setMinBytes?(bytes: number): void;
  on(event: 'packet', listener: (nbytes: number, truncated: boolean) => void): void;
  removeAllListeners(event: 'packet'): void;
}
interface CapModule {
  Cap: { new (): CapHandle; deviceList(): { name: string }[] };
}

/** pcapng link types of the names `cap` reports. */
const LINK_TYPES: Record<string, number> = {
  NULL: 0,
  ETHERNET: 1,
  RAW: 101,
  IEEE802_11_RADIO: 127,
  LINKTYPE_LINUX_SLL: 113,
};
const SNAPLEN = 65535;
/**
 * The kernel ring of one capture. `cap` opens libpcap in immediate mode with a fixed 65,535-byte
 * snaplen, so each packet takes a ~64 KiB frame of the ring whatever its size: 16 MiB held about
 * 250 packets and the kernel dropped 56 % of a 5,000 packets/s loopback stream (it arrives in
 * bursts); 128 MiB (about 2,000 frames) dropped none from 5,000 to 100,000 packets/s
 * (test/bench/README.md, packet capture).
 */
const KERNEL_BUFFER = 128 * 1024 * 1024;
const FLUSH_EVERY_MS = 50;
const FLUSH_BYTES = 256 * 1024;

let loaded: { module: CapModule } | { error: string } | null = null;

/** Loads the optional dependency once; the cause when it is absent or failed to build. */
export function loadCap(): CapModule | string {
  if (loaded === null) {
    try {
      const require = createRequire(import.meta.url);
      loaded = { module: require('cap') as CapModule };
    } catch (err) {
      loaded = {
        error: `the optional dependency cap (libpcap) is not installed or failed to build: ${oneLine((err as Error).message, 160)}`,
      };
    }
  }
  return 'module' in loaded ? loaded.module : loaded.error;
}

const pad4 = (n: number) => (4 - (n % 4)) % 4;

export function sectionHeaderBlock(): Buffer {
  const b = Buffer.alloc(28);
  b.writeUInt32LE(SHB_TYPE, 0);
  b.writeUInt32LE(28, 4);
  b.writeUInt32LE(0x1a2b3c4d, 8);
  b.writeUInt16LE(1, 12);
  b.writeUInt16LE(0, 14);
  b.writeBigInt64LE(-1n, 16);
  b.writeUInt32LE(28, 24);
  return b;
}

/** IDB with if_name (2) and if_tsresol (9) = 6 (microseconds), then opt_endofopt. */
export function interfaceBlock(linkType: number, name: string): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const options = Buffer.alloc(4 + nameBytes.length + pad4(nameBytes.length) + 8 + 4);
  let at = 0;
  options.writeUInt16LE(2, at);
  options.writeUInt16LE(nameBytes.length, at + 2);
  nameBytes.copy(options, at + 4);
  at += 4 + nameBytes.length + pad4(nameBytes.length);
  options.writeUInt16LE(9, at);
  options.writeUInt16LE(1, at + 2);
  options.writeUInt8(6, at + 4);
  at += 8;
  // opt_endofopt: zeros
  const length = 16 + options.length + 4;
  const b = Buffer.alloc(length);
  b.writeUInt32LE(IDB_TYPE, 0);
  b.writeUInt32LE(length, 4);
  b.writeUInt16LE(linkType, 8);
  b.writeUInt16LE(0, 10);
  b.writeUInt32LE(SNAPLEN, 12);
  options.copy(b, 16);
  b.writeUInt32LE(length, length - 4);
  return b;
}

/** Writes one EPB (interface, timestamp in µs, captured = original length) at `at`; its length. */
export function writePacketBlock(
  out: Buffer,
  at: number,
  ifIndex: number,
  micros: number,
  data: Buffer,
  length: number,
): number {
  const padded = length + pad4(length);
  const total = 32 + padded;
  const high = Math.floor(micros / 0x100000000);
  out.writeUInt32LE(EPB_TYPE, at);
  out.writeUInt32LE(total, at + 4);
  out.writeUInt32LE(ifIndex, at + 8);
  out.writeUInt32LE(high, at + 12);
  out.writeUInt32LE(micros - high * 0x100000000, at + 16);
  out.writeUInt32LE(length, at + 20);
  out.writeUInt32LE(length, at + 24);
  data.copy(out, at + 28, 0, length);
  out.fill(0, at + 28 + length, at + 28 + padded);
  out.writeUInt32LE(total, at + total - 4);
  return total;
}

/** Microseconds since the epoch on receipt: the wall clock anchored once, then the monotonic clock. */
function receiptMicros(): () => number {
  const anchorWall = Date.now() * 1000;
  const anchorMono = performance.now();
  return () => Math.floor(anchorWall + (performance.now() - anchorMono) * 1000);
}

/**
 * Every libpcap handle this process creates is kept referenced until it exits, and a handle whose
 * open() threw is never closed. `cap` (0.2.x) embeds a libuv poll handle in each native Cap that it
 * stops but never closes, and its finalizer calls close() again:
 * - open() that fails after pcap_create (a filter libpcap refuses, an interface it cannot activate)
 *   leaves the poll handle uninitialised and the object unreferenced; when the garbage collector
 *   finalizes it, close() stops that garbage and libuv aborts the process (`uv_poll_stop:
 *   Assertion !uv__is_closing(handle)`: vitest workers died at random points of three CI runs;
 *   reproduced with 300 refused filters and a forced collection, and kept off by this list);
 * - a closed Cap, once collected, frees a poll handle that is still linked in the event loop's
 *   handle queue, and the next handle inserted beside it writes into freed memory.
 * The list lives on globalThis so that a module evaluated twice in one process shares it. What it
 * costs: the native object (a few hundred bytes) per handle; a handle whose open() failed also
 * keeps its pcap_t, and after a refused filter its activated socket, which is why a filter is
 * first tried on a small kernel buffer (FILTER_PROBE_BUFFER) before the 128 MiB capture ring.
 * Buffers and packet listeners are dropped at close, so a retained handle holds no capture data.
 */
const RETAINED = Symbol.for('netmon.cap.handles');
const retained: CapHandle[] = ((globalThis as unknown as Record<symbol, CapHandle[]>)[RETAINED] ??=
  []);
/** The kernel buffer of the throwaway handle that tries a filter before the capture opens. */
const FILTER_PROBE_BUFFER = 65536;

/** A new handle opened on `iface`, retained (above); open()'s error is thrown as it came. */
function openHandle(
  cap: CapModule,
  iface: string,
  filter: string,
  bufSize: number,
  buffer: Buffer,
): { handle: CapHandle; link: string } {
  const handle = new cap.Cap();
  retained.push(handle);
  const link = handle.open(iface, filter, bufSize, buffer);
  return { handle, link };
}

/** Closes a handle whose open() succeeded and lets go of its buffer and listeners. */
function closeHandle(handle: CapHandle): void {
  try {
    handle.close();
  } catch {
    // already closed
  }
  handle.removeAllListeners('packet');
  delete (handle as CapHandle & { buffer?: Buffer }).buffer;
}

/** The probe's verdict, once per process: a process's capabilities do not change while it runs. */
let probed: string | null | undefined;

export class CapEngine implements CaptureEngine {
  readonly name = 'cap' as const;

  async unusable(): Promise<string | null> {
    const cap = loadCap();
    if (typeof cap === 'string') return cap;
    if (probed !== undefined) return probed;
    try {
      closeHandle(openHandle(cap, 'lo', '', FILTER_PROBE_BUFFER, Buffer.alloc(SNAPLEN)).handle);
      probed = null;
    } catch (err) {
      probed = `libpcap cannot capture (CAP_NET_RAW is needed): ${oneLine((err as Error).message)}`;
    }
    return probed;
  }

  async start(options: EngineStartOptions): Promise<EngineRun> {
    const cap = loadCap();
    if (typeof cap === 'string') throw new EngineUnavailable(cap);
    const fd = fs.openSync(
      options.file,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
      0o600,
    );
    const handles: CapHandle[] = [];
    const header: Buffer[] = [sectionHeaderBlock()];
    const closeAll = () => {
      for (const h of handles.splice(0)) closeHandle(h);
    };
    // An interface this network namespace does not have is refused here, before libpcap (which
    // would print a warning on stderr and leave a handle to retain); `any` is libpcap's own.
    const known = namespaceInterfaces();
    const opened = (iface: string, bufSize: number, buffer: Buffer) => {
      if (iface !== 'any' && known !== null && !known.includes(iface))
        throw new EngineRejected('bad-interface', `${iface}: No such device exists`);
      try {
        return openHandle(cap, iface, options.bpf, bufSize, buffer);
      } catch (err) {
        const message = oneLine((err as Error).message);
        if (/syntax|filter|illegal|parse/i.test(message))
          throw new EngineRejected('bad-filter', `The capture filter is invalid: ${message}`);
        if (/no such device|doesn't exist|not found/i.test(message))
          throw new EngineRejected('bad-interface', message);
        throw new EngineUnavailable(`libpcap cannot capture on ${iface}: ${message}`);
      }
    };
    try {
      options.ifaces.forEach((iface) => {
        // The filter and the interface first on a small buffer: a refusal then keeps a small
        // socket for the life of the process (see retained), not a 128 MiB ring.
        closeHandle(opened(iface, FILTER_PROBE_BUFFER, Buffer.alloc(SNAPLEN)).handle);
        const buffer = Buffer.alloc(SNAPLEN);
        const { handle, link: linkName } = opened(iface, KERNEL_BUFFER, buffer);
        const linkType = LINK_TYPES[linkName];
        if (linkType === undefined) {
          closeHandle(handle);
          throw new EngineRejected(
            'bad-interface',
            `${iface}: link type ${linkName} is not supported by the cap engine`,
          );
        }
        handle.setMinBytes?.(0);
        handles.push(handle);
        header.push(interfaceBlock(linkType, iface));
        (handle as CapHandle & { buffer: Buffer }).buffer = buffer;
      });
      fs.writeSync(fd, Buffer.concat(header));
    } catch (err) {
      closeAll();
      fs.closeSync(fd);
      throw err;
    }
    let written = header.reduce((n, b) => n + b.length, 0);
    // Blocks are written in place into one reused buffer (no allocation per packet) and appended
    // to the file when it holds FLUSH_BYTES or every FLUSH_EVERY_MS.
    const out = Buffer.allocUnsafe(FLUSH_BYTES + SNAPLEN + 64);
    let used = 0;
    let ended = false;
    let resolveExit!: (exit: EngineExit) => void;
    const exited = new Promise<EngineExit>((resolve) => (resolveExit = resolve));
    const now = receiptMicros();
    const flush = () => {
      if (used === 0) return;
      let at = 0;
      while (at < used) at += fs.writeSync(fd, out, at, used - at);
      written += used;
      used = 0;
    };
    const finish = (error: string | null) => {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      // Closed on the next turn, never inside a handle's own packet callback (the byte cap ends
      // a capture from there): cap's close() under its poll callback stops a libuv poll handle
      // that is already closing, and libuv aborts the process (seen once in CI: uv_poll_stop's
      // assertion). Packets that arrive meanwhile are dropped by the `ended` check.
      setImmediate(closeAll);
      try {
        flush();
      } catch (err) {
        error ??= oneLine((err as Error).message);
      }
      fs.closeSync(fd);
      resolveExit({ error, drops: null });
    };
    handles.forEach((handle, ifIndex) => {
      const buffer = (handle as CapHandle & { buffer: Buffer }).buffer;
      handle.on('packet', (nbytes) => {
        if (ended) return;
        used += writePacketBlock(out, used, ifIndex, now(), buffer, nbytes);
        if (used >= FLUSH_BYTES) {
          try {
            flush();
          } catch (err) {
            finish(oneLine((err as Error).message));
          }
        }
        if (written + used >= options.byteCap) finish(null);
      });
    });
    const timer = setInterval(() => {
      try {
        flush();
      } catch (err) {
        finish(oneLine((err as Error).message));
      }
    }, FLUSH_EVERY_MS);
    timer.unref();
    return {
      pid: null,
      exited,
      stop: async () => {
        finish(null);
        return exited;
      },
    };
  }
}
