/**
 * The pcapng block splitter and the chunk planner, on real files written by dumpcap on the
 * loopback interface (and corrupted by editcap -E), and on fast-check inputs: random bytes,
 * truncation at every offset, corrupted lengths. Pass: complete blocks that tile the input from
 * its start, or a typed error; never a throw.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChunkPlanner,
  EPB_TYPE,
  FLUSH_MS,
  IDB_TYPE,
  MAX_CHUNK_BYTES,
  MIN_CHUNK_BYTES,
  SHB_TYPE,
  splitBlocks,
  type SplitResult,
} from './pcapng.rules.js';

const CODES = ['not-pcapng', 'bad-byte-order', 'bad-length', 'length-mismatch'];
let dir: string;
let real: Buffer;

/** Captures a few pings on lo with dumpcap and returns the file. */
async function loopbackCapture(file: string): Promise<Buffer> {
  const child = spawn('dumpcap', ['-n', '-q', '-i', 'lo', '-f', 'icmp', '-w', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  for (let i = 0; i < 100 && !err.includes('File:'); i++)
    await new Promise((r) => setTimeout(r, 50));
  execFileSync('ping', ['-c', '5', '-i', '0.05', '-s', '200', '127.0.0.1'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return fs.readFileSync(file);
}

/** Checks the shape of a split: blocks tile data[0, consumed) in order; errors typed. */
function checked(data: Uint8Array): SplitResult {
  const result = splitBlocks(data, 0, null);
  let at = 0;
  for (const block of result.blocks) {
    expect(block.offset).toBe(at);
    expect(block.length).toBeGreaterThanOrEqual(12);
    at += block.length;
  }
  expect(result.consumed).toBe(at);
  expect(result.consumed).toBeLessThanOrEqual(data.length);
  if (result.error) expect(CODES).toContain(result.error.code);
  return result;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcapng-rules-'));
  real = await loopbackCapture(path.join(dir, 'lo.pcapng'));
}, 20_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('splitBlocks on a real dumpcap file', () => {
  it('splits the whole file into SHB, IDB, EPBs (and statistics), no error', () => {
    const result = checked(real);
    expect(result.error).toBeNull();
    expect(result.consumed).toBe(real.length);
    expect(result.littleEndian).toBe(os.endianness() === 'LE');
    expect(result.blocks[0]!.type).toBe(SHB_TYPE);
    expect(result.blocks[1]!.type).toBe(IDB_TYPE);
    expect(result.blocks.filter((b) => b.type === EPB_TYPE).length).toBeGreaterThanOrEqual(10);
  });

  it('truncated at every offset: complete blocks only, the tail left for later, no error', () => {
    const full = splitBlocks(real, 0, null).blocks;
    for (let cut = 0; cut <= real.length; cut++) {
      const result = checked(real.subarray(0, cut));
      expect(result.error).toBeNull();
      const expected = full.filter((b) => b.offset + b.length <= cut);
      expect(result.blocks).toEqual(expected);
    }
  });

  it('continues from an offset with the byte order of an earlier read', () => {
    const first = splitBlocks(real.subarray(0, 100), 0, null);
    const rest = splitBlocks(real.subarray(first.consumed), first.consumed, first.littleEndian);
    expect(rest.error).toBeNull();
    expect([...first.blocks, ...rest.blocks]).toEqual(splitBlocks(real, 0, null).blocks);
  });

  it('editcap -E corruption: typed errors or blocks, never a throw', () => {
    for (let i = 0; i < 8; i++) {
      const out = path.join(dir, `corrupt-${i}.pcapng`);
      try {
        execFileSync('editcap', ['-E', '0.02', path.join(dir, 'lo.pcapng'), out], {
          stdio: 'ignore',
        });
      } catch {
        continue; // editcap may refuse to write a corrupted record; the next round tries again
      }
      const data = fs.readFileSync(out);
      // editcap rewrites the file (same blocks, corrupted payload bytes); corrupt lengths too.
      checked(data);
      const mangled = Buffer.from(data);
      for (let j = 0; j < 20; j++) mangled[(j * 7919) % mangled.length]! ^= 0xff;
      checked(mangled);
    }
  });
});

describe('splitBlocks properties', () => {
  it('random bytes: a typed error or complete blocks, never a throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
        checked(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it('a real file with random bytes overwritten: typed error or blocks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 8,
        }),
        (edits) => {
          const data = Buffer.from(real);
          for (const [at, value] of edits) data[at % data.length] = value;
          checked(data);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a corrupted block length is reported as bad-length or length-mismatch, with its offset', () => {
    const blocks = splitBlocks(real, 0, null).blocks;
    fc.assert(
      fc.property(
        fc.nat({ max: blocks.length - 1 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (i, length) => {
          const block = blocks[i]!;
          if (length === block.length) return;
          const data = Buffer.from(real);
          data.writeUInt32LE(length, block.offset + 4);
          const result = checked(data);
          if (result.error) {
            expect(['bad-length', 'length-mismatch']).toContain(result.error.code);
            expect(result.error.offset).toBeLessThanOrEqual(block.offset);
          } else {
            // A longer length that runs past the end is an incomplete tail, not an error.
            expect(result.consumed).toBeLessThanOrEqual(block.offset);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a file that does not start with an SHB is not-pcapng', () => {
    const result = splitBlocks(real.subarray(real.readUInt32LE(4)), 0, null);
    expect(result.error?.code).toBe('not-pcapng');
  });
});

describe('ChunkPlanner', () => {
  /** EPB-sized blocks after a 100-byte header (SHB 60 + IDB 40). */
  const header = [
    { type: SHB_TYPE, offset: 0, length: 60 },
    { type: IDB_TYPE, offset: 60, length: 40 },
  ];
  const packets = (from: number, count: number, size: number) =>
    Array.from({ length: count }, (_, i) => ({
      type: EPB_TYPE,
      offset: from + i * size,
      length: size,
    }));

  it('keeps the header apart and flushes at 64 KiB or after 250 ms, not per packet', () => {
    const planner = new ChunkPlanner();
    planner.add(header, 0);
    expect(planner.headerEnd).toBe(100);
    expect(planner.interfaces).toBe(1);
    planner.add(packets(100, 10, 100), 0);
    expect(planner.take(FLUSH_MS - 1)).toEqual([]);
    expect(planner.take(FLUSH_MS)).toEqual([{ seq: 1, offset: 100, length: 1000, packets: 10 }]);
    const many = Math.ceil(MIN_CHUNK_BYTES / 100);
    planner.add(packets(1100, many, 100), 1000);
    const due = planner.take(1000);
    expect(due).toEqual([{ seq: 2, offset: 1100, length: many * 100, packets: many }]);
    expect(planner.packets).toBe(10 + many);
  });

  it('cuts chunks at block boundaries to at most 1 MiB, in order, gap-free', () => {
    const planner = new ChunkPlanner();
    planner.add(header, 0);
    const size = 1500;
    const count = Math.ceil((3 * MAX_CHUNK_BYTES) / size);
    planner.add(packets(100, count, size), 0);
    const chunks = planner.take(0, true);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    let at = 100;
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.seq).toBe(i + 1);
      expect(chunk.offset).toBe(at);
      expect(chunk.length).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
      expect(chunk.length % size).toBe(0);
      at += chunk.length;
    }
    expect(at).toBe(100 + count * size);
    expect(chunks.reduce((n, c) => n + c.packets, 0)).toBe(count);
  });
});
