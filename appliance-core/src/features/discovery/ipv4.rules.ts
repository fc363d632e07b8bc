/**
 * IPv4 ranges of local networks: `network`..`broadcast` inclusive, at most 65536 addresses.
 */
export const MAX_RANGE = 65_536;

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);

/** The address as an unsigned 32-bit number, or null when `text` is not a dotted-quad IPv4 literal. */
export function ipv4ToNumber(text: string): number | null {
  const m = DOTTED_QUAD.exec(text);
  if (!m) return null;
  return Number(m[1]) * 16_777_216 + Number(m[2]) * 65_536 + Number(m[3]) * 256 + Number(m[4]);
}

export function numberToIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

/**
 * The host addresses of a range, in chunks (never one array of 65536 strings at once). The
 * first and last addresses of a range of more than two are its network and broadcast addresses
 * and are not hosts; a /31 or /32 range is all hosts.
 */
export function* hostChunks(
  networkNum: number,
  broadcastNum: number,
  chunkSize: number,
): Generator<string[]> {
  const size = broadcastNum - networkNum + 1;
  const first = size > 2 ? networkNum + 1 : networkNum;
  const last = size > 2 ? broadcastNum - 1 : broadcastNum;
  for (let start = first; start <= last; start += chunkSize) {
    const chunk: string[] = [];
    for (let n = start; n <= Math.min(last, start + chunkSize - 1); n++)
      chunk.push(numberToIpv4(n));
    yield chunk;
  }
}

/** How many host addresses a sweep of the range probes. */
export function hostCount(networkNum: number, broadcastNum: number): number {
  const size = broadcastNum - networkNum + 1;
  return size > 2 ? size - 2 : size;
}
