/**
 * The pcapng block splitter that serves capture chunks (pure, free of I/O).
 *
 * A pcapng file is a sequence of blocks: type (u32), total length (u32), body, total length
 * again; lengths are multiples of 4 and at least 12. The Section Header Block (SHB, type
 * 0x0A0D0D0A) opens the file and fixes the byte order with its magic 0x1A2B3C4D. The capture
 * engines append blocks to a growing file; the splitter reads what is there and answers the
 * complete blocks, leaves an incomplete tail for the next read, and reports a malformed file as a
 * typed error (never a throw), so a corrupted or truncated file cannot break the API.
 *
 * `ChunkPlanner` groups complete blocks into chunks: the header (SHB and the Interface
 * Description Blocks that follow it) is kept apart as `pcapng_shb`; after it, one chunk per
 * flush, when at least MIN_CHUNK_BYTES are pending or FLUSH_MS have passed since the first
 * pending block, each at most MAX_CHUNK_BYTES (cut at block boundaries).
 */

export const SHB_TYPE = 0x0a0d0d0a;
export const IDB_TYPE = 0x00000001;
export const EPB_TYPE = 0x00000006;
export const SPB_TYPE = 0x00000003;
/** The obsolete Packet Block, still readable. */
export const PB_TYPE = 0x00000002;
export const ISB_TYPE = 0x00000005;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
/** Longest block accepted: a 256 KiB snapshot plus options, with room to spare. */
export const MAX_BLOCK_BYTES = 16 * 1024 * 1024;

export const MIN_CHUNK_BYTES = 64 * 1024;
export const FLUSH_MS = 250;
export const MAX_CHUNK_BYTES = 1024 * 1024;

export type SplitErrorCode = 'not-pcapng' | 'bad-byte-order' | 'bad-length' | 'length-mismatch';

export interface SplitError {
  code: SplitErrorCode;
  /** Offset of the offending block in the file. */
  offset: number;
  message: string;
}

export interface BlockRef {
  type: number;
  /** Offset in the file. */
  offset: number;
  length: number;
}

export interface SplitResult {
  blocks: BlockRef[];
  /** Bytes of `data` that form complete blocks (the next read starts at base + consumed). */
  consumed: number;
  /** Byte order of the section (null until an SHB was read). */
  littleEndian: boolean | null;
  error: SplitError | null;
}

/**
 * Splits `data` (the file's bytes from offset `base`) into complete blocks. `littleEndian` is the
 * section's byte order from an earlier read (null at the start of the file, where an SHB must be).
 */
export function splitBlocks(
  data: Uint8Array,
  base: number,
  littleEndian: boolean | null,
): SplitResult {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const blocks: BlockRef[] = [];
  let at = 0;
  let order = littleEndian;
  const fail = (code: SplitErrorCode, message: string): SplitResult => ({
    blocks,
    consumed: at,
    littleEndian: order,
    error: { code, offset: base + at, message },
  });
  while (data.length - at >= 12) {
    const typeLE = view.getUint32(at, true);
    if (typeLE === SHB_TYPE) {
      // The SHB's type reads the same in both orders; its magic gives the section's order.
      const magic = view.getUint32(at + 8, true);
      if (magic === BYTE_ORDER_MAGIC) order = true;
      else if (magic === 0x4d3c2b1a) order = false;
      else return fail('bad-byte-order', 'section header byte-order magic is not 0x1A2B3C4D');
    } else if (order === null) {
      return fail('not-pcapng', 'the file does not begin with a pcapng section header block');
    }
    const le = order;
    const type = view.getUint32(at, le);
    const length = view.getUint32(at + 4, le);
    if (length < 12 || length % 4 !== 0 || length > MAX_BLOCK_BYTES)
      return fail('bad-length', `block length ${length} is not a multiple of 4 from 12 to 16 MiB`);
    if (type === SHB_TYPE && length < 28)
      return fail('bad-length', `section header block length ${length} is below 28`);
    if (data.length - at < length) break;
    const trailer = view.getUint32(at + length - 4, le);
    if (trailer !== length)
      return fail(
        'length-mismatch',
        `block length ${length} and trailing length ${trailer} differ`,
      );
    blocks.push({ type, offset: base + at, length });
    at += length;
  }
  if (order === null && data.length >= 4 && view.getUint32(0, true) !== SHB_TYPE)
    return fail('not-pcapng', 'the file does not begin with a pcapng section header block');
  return { blocks, consumed: at, littleEndian: order, error: null };
}

export const isPacketBlock = (type: number) =>
  type === EPB_TYPE || type === SPB_TYPE || type === PB_TYPE;

export interface PlannedChunk {
  seq: number;
  offset: number;
  length: number;
  packets: number;
}

/**
 * Groups complete blocks into the header and chunks. Feed it every block in file order
 * (`add`), then `take(now, final)` the chunks due; `final` flushes whatever is pending.
 */
export class ChunkPlanner {
  /** End of the header (SHB and the IDBs right after it) in the file. */
  headerEnd = 0;
  interfaces = 0;
  packets = 0;
  private headerOpen = true;
  private pendingStart = -1;
  private pendingEnd = -1;
  private pendingPackets = 0;
  private pendingSince = 0;
  private nextSeq: number;
  /** Chunk boundaries inside the pending run (each run at most MAX_CHUNK_BYTES). */
  private cuts: { end: number; packets: number }[] = [];

  constructor(options: { nextSeq?: number; headerEnd?: number } = {}) {
    this.nextSeq = options.nextSeq ?? 1;
    if (options.headerEnd !== undefined && options.headerEnd > 0) {
      this.headerEnd = options.headerEnd;
      this.headerOpen = false;
    }
  }

  add(blocks: readonly BlockRef[], now: number): void {
    for (const block of blocks) {
      if (this.headerOpen && (block.type === SHB_TYPE || block.type === IDB_TYPE)) {
        this.headerEnd = block.offset + block.length;
        if (block.type === IDB_TYPE) this.interfaces++;
        continue;
      }
      this.headerOpen = false;
      if (block.type === IDB_TYPE) this.interfaces++;
      const packet = isPacketBlock(block.type) ? 1 : 0;
      this.packets += packet;
      if (this.pendingStart < 0) {
        this.pendingStart = block.offset;
        this.pendingEnd = block.offset;
        this.pendingSince = now;
      }
      const runStart =
        this.cuts.length > 0 ? this.cuts[this.cuts.length - 1]!.end : this.pendingStart;
      if (
        this.pendingEnd - runStart + block.length > MAX_CHUNK_BYTES &&
        this.pendingEnd > runStart
      ) {
        this.cuts.push({ end: this.pendingEnd, packets: this.pendingPackets });
        this.pendingPackets = 0;
      }
      this.pendingEnd = block.offset + block.length;
      this.pendingPackets += packet;
    }
  }

  /** The chunks due now (all pending ones when `final`). */
  take(now: number, final = false): PlannedChunk[] {
    if (this.pendingStart < 0) return [];
    const pendingBytes = this.pendingEnd - this.pendingStart;
    const due =
      final ||
      this.cuts.length > 0 ||
      pendingBytes >= MIN_CHUNK_BYTES ||
      now - this.pendingSince >= FLUSH_MS;
    if (!due) return [];
    const out: PlannedChunk[] = [];
    let start = this.pendingStart;
    for (const cut of this.cuts) {
      out.push({
        seq: this.nextSeq++,
        offset: start,
        length: cut.end - start,
        packets: cut.packets,
      });
      start = cut.end;
    }
    if (this.pendingEnd > start)
      out.push({
        seq: this.nextSeq++,
        offset: start,
        length: this.pendingEnd - start,
        packets: this.pendingPackets,
      });
    this.cuts = [];
    this.pendingStart = -1;
    this.pendingEnd = -1;
    this.pendingPackets = 0;
    return out;
  }
}
