// @ts-check
/**
 * NetFlow v5, NetFlow v9 (RFC 3954) and IPFIX (RFC 7011) decoding, pure and free of I/O: plain
 * JavaScript so that the collector's worker thread (flow-collector.engine.mjs) and Vitest import
 * the same module. A `FlowDecoder` holds the state a collector needs between datagrams: the
 * templates and options templates of each exporter and source id / observation domain, the
 * sampling rate an exporter announced, and data sets that arrived before their template.
 *
 * Invariants (docs/features/flows.md):
 * - `decode()` never throws on input. A malformed or truncated datagram gives the records read
 *   before the fault plus `error` (a short typed reason); every loop is bounded by the bytes it
 *   consumes (each pass moves forward by at least one byte), so no input can spin.
 * - Templates are capped per exporter (MAX_TEMPLATES_PER_EXPORTER) and overall (MAX_TEMPLATES);
 *   beyond a cap the least recently used template is evicted and counted. A template wider than
 *   MAX_TEMPLATE_FIELDS fields, or whose records exceed a datagram, is refused (malformed).
 * - A data set whose template is unknown is held (a copy of its bytes) for HOLD_MS, at most
 *   MAX_HELD_PER_EXPORTER sets per exporter key and MAX_HELD_BYTES overall; the template's
 *   arrival releases it (its records come out of that decode() call); expiry or a cap drops it,
 *   counted. Nothing is dropped silently.
 * - Sampling: a rate announced in an options data record (fields 34, 50, 305, or 309/310), in
 *   a data record (field 34) or in the v5 header multiplies that exporter key's bytes and
 *   packets. The key of every cache is `exporter address|source id` (v9) or `|domain` (IPFIX).
 * - Times: absolute fields (150-157) as given; uptime-relative ones (21/22, v5) against the
 *   header's export time and uptime modulo 2^32, so an uptime wrap never dates a flow 49.7 days
 *   away; delta microseconds (158/159) against the export time.
 */

export const MAX_TEMPLATES_PER_EXPORTER = 512;
export const MAX_TEMPLATES = 16_384;
export const MAX_TEMPLATE_FIELDS = 1024;
export const HOLD_MS = 10_000;
export const MAX_HELD_PER_EXPORTER = 64;
export const MAX_HELD_BYTES = 8 * 1024 * 1024;
/** The largest UDP payload: a template whose fixed-length record exceeds it can never match. */
const MAX_DATAGRAM = 65_535;
const TWO32 = 4_294_967_296;

/** Field ids (IANA IPFIX information elements; NetFlow v9 uses the same numbers below 128). */
const F = {
  bytes: 1,
  packets: 2,
  protocol: 4,
  tos: 5,
  tcpFlags: 6,
  srcPort: 7,
  srcIpv4: 8,
  inIface: 10,
  dstPort: 11,
  dstIpv4: 12,
  outIface: 14,
  lastUptime: 21,
  firstUptime: 22,
  srcIpv6: 27,
  dstIpv6: 28,
  samplingInterval: 34,
  samplerRandomInterval: 50,
  vlan: 58,
  bytesTotal: 85,
  packetsTotal: 86,
  startSeconds: 150,
  endSeconds: 151,
  startMillis: 152,
  endMillis: 153,
  startMicros: 154,
  endMicros: 155,
  startNanos: 156,
  endNanos: 157,
  startDeltaMicros: 158,
  endDeltaMicros: 159,
  dot1qVlan: 243,
  samplingPacketInterval: 305,
  samplingSize: 309,
  samplingPopulation: 310,
};

/**
 * @typedef {{
 *   srcIp: string, dstIp: string, srcPort: number, dstPort: number, protocol: number,
 *   bytes: number, packets: number, startTime: number, endTime: number,
 *   vlan: number | null, inIface: number | null, outIface: number | null,
 *   tcpFlags: number | null, tos: number | null
 * }} FlowRecord
 * @typedef {{ id: number, length: number, enterprise: boolean }} TemplateField
 * @typedef {{ fields: TemplateField[], scopeCount: number, options: boolean, minLength: number, variable: boolean }} Template
 * @typedef {{ version: number, exportMs: number, uptimeMs: number | null, key: string }} Context
 * @typedef {{ key: string, templateId: number, bytes: Uint8Array, ctx: Context, heldAt: number, gone: boolean }} HeldSet
 * @typedef {{ version: number | null, records: FlowRecord[], error: string | null, released: number }} DecodeResult
 */

/** Big-endian unsigned integer of 1..8 bytes as a Number (beyond 2^53 it rounds). */
function uint(b, o, n) {
  let v = 0;
  for (let i = 0; i < n; i++) v = v * 256 + /** @type {number} */ (b[o + i]);
  return v;
}

function ipv4(b, o) {
  return `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
}

/** Canonical IPv6 text (RFC 5952: lower case, longest zero run compressed); mapped IPv4 as IPv4. */
export function ipv6(b, o) {
  /** @type {number[]} */
  const groups = [];
  for (let i = 0; i < 8; i++) groups.push(uint(b, o + 2 * i, 2));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return ipv4(b, o + 12);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Absolute ms of an uptime-relative time: `uptimeMs` ago-relative, modulo 2^32 (see header). */
function fromUptime(exportMs, uptimeMs, at) {
  let delta = (uptimeMs - at) % TWO32;
  if (delta < 0) delta += TWO32;
  if (delta > TWO32 / 2) delta -= TWO32;
  return exportMs - delta;
}

export class FlowDecoder {
  /**
   * @param {{ maxTemplatesPerExporter?: number, maxTemplates?: number, holdMs?: number,
   *   maxHeldPerExporter?: number, maxHeldBytes?: number }} [options]
   */
  constructor(options = {}) {
    this.maxTemplatesPerExporter = options.maxTemplatesPerExporter ?? MAX_TEMPLATES_PER_EXPORTER;
    this.maxTemplates = options.maxTemplates ?? MAX_TEMPLATES;
    this.holdMs = options.holdMs ?? HOLD_MS;
    this.maxHeldPerExporter = options.maxHeldPerExporter ?? MAX_HELD_PER_EXPORTER;
    this.maxHeldBytes = options.maxHeldBytes ?? MAX_HELD_BYTES;
    /** `key|templateId` -> template, in least-recently-used order (Map order). @type {Map<string, Template>} */
    this.templates = new Map();
    /** key -> number of templates. @type {Map<string, number>} */
    this.perExporter = new Map();
    /** key -> sampling rate. @type {Map<string, number>} */
    this.sampling = new Map();
    /** Held sets in arrival order (entries marked `gone` are skipped), and per exporter key. */
    /** @type {HeldSet[]} */
    this.heldQueue = [];
    this.heldHead = 0;
    /** @type {Map<string, HeldSet[]>} */
    this.heldByKey = new Map();
    this.heldCount = 0;
    this.heldBytes = 0;
    this.counters = {
      /** Datagrams with a fault (their records before it are kept). */
      malformed: 0,
      /** Templates evicted by a cap. */
      evictions: 0,
      /** Templates withdrawn by the exporter (IPFIX). */
      withdrawn: 0,
      /** Data sets held for a template, released with it, and dropped (expired or capped). */
      heldSets: 0,
      releasedSets: 0,
      expiredSets: 0,
    };
  }

  /** Templates cached now (all exporters). */
  get templateCount() {
    return this.templates.size;
  }

  /** Templates cached for one exporter key (`address|id`). */
  templatesOf(key) {
    return this.perExporter.get(key) ?? 0;
  }

  /**
   * Decodes one datagram from `exporter` (its address) received at `now` (ms).
   * @param {Uint8Array} b
   * @param {string} exporter
   * @param {number} now
   * @returns {DecodeResult}
   */
  decode(b, exporter, now) {
    this.expire(now);
    /** @type {DecodeResult} */
    const out = { version: null, records: [], error: null, released: 0 };
    if (b.length < 2) return this.fault(out, 'truncated');
    const version = uint(b, 0, 2);
    out.version = version;
    try {
      if (version === 5) this.v5(b, out);
      else if (version === 9) this.v9(b, exporter, now, out);
      else if (version === 10) this.ipfix(b, exporter, now, out);
      else return this.fault(out, 'unknown-version');
    } catch (err) {
      // Never expected (every read is bounds-checked); kept so that a bug cannot kill intake.
      return this.fault(out, `internal: ${/** @type {Error} */ (err).message}`);
    }
    if (out.error !== null) this.counters.malformed++;
    return out;
  }

  /** Drops held sets older than the hold time. */
  expire(now) {
    while (this.heldHead < this.heldQueue.length) {
      const h = /** @type {HeldSet} */ (this.heldQueue[this.heldHead]);
      if (!h.gone && now - h.heldAt <= this.holdMs) break;
      if (!h.gone) this.drop(h);
      this.heldHead++;
    }
    if (this.heldHead > 1024 && this.heldHead * 2 > this.heldQueue.length) {
      this.heldQueue = this.heldQueue.slice(this.heldHead);
      this.heldHead = 0;
    }
  }

  /** Held sets waiting for a template now. */
  get held() {
    return this.heldQueue.slice(this.heldHead).filter((h) => !h.gone);
  }

  /** @param {DecodeResult} out @param {string} error */
  fault(out, error) {
    out.error = error;
    this.counters.malformed++;
    return out;
  }

  // --- NetFlow v5 --------------------------------------------------------------------------
  /** @param {Uint8Array} b @param {DecodeResult} out */
  v5(b, out) {
    if (b.length < 24) {
      out.error = 'truncated';
      return;
    }
    const count = uint(b, 2, 2);
    const uptime = uint(b, 4, 4);
    const exportMs = uint(b, 8, 4) * 1000 + Math.floor(uint(b, 12, 4) / 1e6);
    const samplingField = uint(b, 22, 2);
    const rate = samplingField & 0x3fff;
    const factor = rate > 1 ? rate : 1;
    if (count === 0 || count > 30) {
      out.error = 'bad-count';
      return;
    }
    for (let i = 0; i < count; i++) {
      const o = 24 + i * 48;
      if (o + 48 > b.length) {
        out.error = 'truncated';
        return;
      }
      out.records.push({
        srcIp: ipv4(b, o),
        dstIp: ipv4(b, o + 4),
        inIface: uint(b, o + 12, 2),
        outIface: uint(b, o + 14, 2),
        packets: uint(b, o + 16, 4) * factor,
        bytes: uint(b, o + 20, 4) * factor,
        startTime: fromUptime(exportMs, uptime, uint(b, o + 24, 4)),
        endTime: fromUptime(exportMs, uptime, uint(b, o + 28, 4)),
        srcPort: uint(b, o + 32, 2),
        dstPort: uint(b, o + 34, 2),
        tcpFlags: /** @type {number} */ (b[o + 37]),
        protocol: /** @type {number} */ (b[o + 38]),
        tos: /** @type {number} */ (b[o + 39]),
        vlan: null,
      });
    }
  }

  // --- NetFlow v9 --------------------------------------------------------------------------
  /** @param {Uint8Array} b @param {string} exporter @param {number} now @param {DecodeResult} out */
  v9(b, exporter, now, out) {
    if (b.length < 20) {
      out.error = 'truncated';
      return;
    }
    const uptime = uint(b, 4, 4);
    const exportMs = uint(b, 8, 4) * 1000;
    const key = `${exporter}|${uint(b, 16, 4)}`;
    /** @type {Context} */
    const ctx = { version: 9, exportMs, uptimeMs: uptime, key };
    let o = 20;
    while (o + 4 <= b.length) {
      const setId = uint(b, o, 2);
      const length = uint(b, o + 2, 2);
      if (length < 4 || o + length > b.length) {
        out.error = length < 4 ? 'bad-set-length' : 'truncated';
        return;
      }
      const end = o + length;
      if (setId === 0) this.templateSet(b, o + 4, end, ctx, false, now, out);
      else if (setId === 1) this.v9OptionsSet(b, o + 4, end, ctx, now, out);
      else if (setId >= 256) this.dataSet(b, o + 4, end, setId, ctx, now, out);
      if (out.error !== null) return;
      o = end;
    }
  }

  /** v9 options template set (RFC 3954 6.1): scope and option lengths in bytes. */
  v9OptionsSet(b, o, end, ctx, now, out) {
    while (o + 6 <= end) {
      const templateId = uint(b, o, 2);
      const scopeBytes = uint(b, o + 2, 2);
      const optionBytes = uint(b, o + 4, 2);
      o += 6;
      if (scopeBytes % 4 !== 0 || optionBytes % 4 !== 0 || o + scopeBytes + optionBytes > end) {
        out.error = 'bad-options-template';
        return;
      }
      const count = (scopeBytes + optionBytes) / 4;
      /** @type {TemplateField[]} */
      const fields = [];
      for (let i = 0; i < count; i++)
        fields.push({
          id: uint(b, o + 4 * i, 2),
          length: uint(b, o + 4 * i + 2, 2),
          enterprise: false,
        });
      o += scopeBytes + optionBytes;
      if (!this.store(ctx, templateId, fields, scopeBytes / 4, true, now, out)) return;
      if (end - o < 6) break; // padding
    }
  }

  // --- IPFIX -------------------------------------------------------------------------------
  /** @param {Uint8Array} b @param {string} exporter @param {number} now @param {DecodeResult} out */
  ipfix(b, exporter, now, out) {
    if (b.length < 16) {
      out.error = 'truncated';
      return;
    }
    const length = uint(b, 2, 2);
    if (length < 16 || length > b.length) {
      out.error = length > b.length ? 'truncated' : 'bad-length';
      return;
    }
    const exportMs = uint(b, 4, 4) * 1000;
    const key = `${exporter}|${uint(b, 12, 4)}`;
    /** @type {Context} */
    const ctx = { version: 10, exportMs, uptimeMs: null, key };
    let o = 16;
    while (o + 4 <= length) {
      const setId = uint(b, o, 2);
      const setLength = uint(b, o + 2, 2);
      if (setLength < 4 || o + setLength > length) {
        out.error = setLength < 4 ? 'bad-set-length' : 'truncated';
        return;
      }
      const end = o + setLength;
      if (setId === 2) this.templateSet(b, o + 4, end, ctx, false, now, out);
      else if (setId === 3) this.templateSet(b, o + 4, end, ctx, true, now, out);
      else if (setId >= 256) this.dataSet(b, o + 4, end, setId, ctx, now, out);
      else {
        out.error = 'bad-set-id';
        return;
      }
      if (out.error !== null) return;
      o = end;
    }
    if (o !== length) out.error = 'truncated';
  }

  /**
   * A template set (v9 id 0, IPFIX 2) or an IPFIX options template set (3). IPFIX field ids
   * with the enterprise bit carry a 4-byte enterprise number, skipped; a record with field
   * count 0 withdraws the template (id 2 or 3: all of the set's kind).
   */
  templateSet(b, o, end, ctx, options, now, out) {
    const ipfix = ctx.version === 10;
    while (o + 4 <= end) {
      const templateId = uint(b, o, 2);
      const count = uint(b, o + 2, 2);
      o += 4;
      if (count === 0) {
        if (!ipfix) {
          out.error = 'bad-template';
          return;
        }
        this.withdraw(ctx.key, templateId, options);
        continue;
      }
      if (templateId < 256 || count > MAX_TEMPLATE_FIELDS) {
        out.error = 'bad-template';
        return;
      }
      let scopeCount = 0;
      if (options) {
        if (o + 2 > end) {
          out.error = 'truncated';
          return;
        }
        scopeCount = uint(b, o, 2);
        o += 2;
        if (scopeCount === 0 || scopeCount > count) {
          out.error = 'bad-options-template';
          return;
        }
      }
      /** @type {TemplateField[]} */
      const fields = [];
      for (let i = 0; i < count; i++) {
        if (o + 4 > end) {
          out.error = 'truncated';
          return;
        }
        let id = uint(b, o, 2);
        const length = uint(b, o + 2, 2);
        o += 4;
        let enterprise = false;
        if (ipfix && id & 0x8000) {
          if (o + 4 > end) {
            out.error = 'truncated';
            return;
          }
          id &= 0x7fff;
          enterprise = true;
          o += 4;
        }
        fields.push({ id, length, enterprise });
      }
      if (!this.store(ctx, templateId, fields, scopeCount, options, now, out)) return;
      // What is left is shorter than any template record header: padding (RFC 7011 3.3.1).
      if (end - o < 4) break;
    }
  }

  /** Caches a template (LRU, capped) and releases data held for it. False on a refused template. */
  store(ctx, templateId, fields, scopeCount, options, now, out) {
    let minLength = 0;
    let variable = false;
    for (const f of fields) {
      if (f.length === 0xffff) {
        if (ctx.version !== 10) {
          out.error = 'bad-template';
          return false;
        }
        variable = true;
        minLength += 1;
      } else minLength += f.length;
    }
    if (minLength === 0 || minLength > MAX_DATAGRAM) {
      out.error = 'bad-template';
      return false;
    }
    const name = `${ctx.key}|${templateId}`;
    if (this.templates.has(name)) this.templates.delete(name);
    else {
      this.perExporter.set(ctx.key, (this.perExporter.get(ctx.key) ?? 0) + 1);
      if ((this.perExporter.get(ctx.key) ?? 0) > this.maxTemplatesPerExporter)
        this.evict((k) => k.startsWith(`${ctx.key}|`), name);
      if (this.templates.size >= this.maxTemplates) this.evict(() => true, name);
    }
    this.templates.set(name, { fields, scopeCount, options, minLength, variable });
    this.release(ctx.key, templateId, now, out);
    return true;
  }

  /** Evicts the least recently used template matching `which` (never `keep`). */
  evict(which, keep) {
    for (const name of this.templates.keys()) {
      if (name === keep || !which(name)) continue;
      this.forget(name);
      this.counters.evictions++;
      return;
    }
  }

  forget(name) {
    if (!this.templates.delete(name)) return;
    const key = name.slice(0, name.lastIndexOf('|'));
    const left = (this.perExporter.get(key) ?? 1) - 1;
    if (left <= 0) this.perExporter.delete(key);
    else this.perExporter.set(key, left);
  }

  /** IPFIX withdrawal: one template, or every (options) template of the key for id 2 (3). */
  withdraw(key, templateId, options) {
    if (templateId >= 256) {
      if (this.templates.has(`${key}|${templateId}`)) this.counters.withdrawn++;
      this.forget(`${key}|${templateId}`);
      return;
    }
    for (const [name, template] of [...this.templates])
      if (name.startsWith(`${key}|`) && template.options === options) {
        this.forget(name);
        this.counters.withdrawn++;
      }
  }

  /** Decodes data held for a template that just arrived. */
  release(key, templateId, now, out) {
    const list = this.heldByKey.get(key);
    if (!list) return;
    const mine = list.filter((h) => h.templateId === templateId);
    if (mine.length === 0) return;
    const rest = list.filter((h) => h.templateId !== templateId);
    if (rest.length === 0) this.heldByKey.delete(key);
    else this.heldByKey.set(key, rest);
    for (const h of mine) {
      h.gone = true;
      this.heldCount--;
      this.heldBytes -= h.bytes.length;
      this.counters.releasedSets++;
      const before = out.records.length;
      /** @type {DecodeResult} */
      const sub = { version: out.version, records: out.records, error: null, released: 0 };
      this.dataSet(h.bytes, 0, h.bytes.length, templateId, h.ctx, now, sub);
      out.released += out.records.length - before;
    }
  }

  /** Holds a data set for its template (bounded, see the header). */
  hold(b, o, end, templateId, ctx, now) {
    /** @type {HeldSet} */
    const h = { key: ctx.key, templateId, bytes: b.slice(o, end), ctx, heldAt: now, gone: false };
    this.heldQueue.push(h);
    let list = this.heldByKey.get(ctx.key);
    if (!list) this.heldByKey.set(ctx.key, (list = []));
    list.push(h);
    this.heldCount++;
    this.heldBytes += h.bytes.length;
    this.counters.heldSets++;
    if (list.length > this.maxHeldPerExporter) this.drop(/** @type {HeldSet} */ (list[0]));
    while (this.heldBytes > this.maxHeldBytes && this.heldHead < this.heldQueue.length) {
      const oldest = /** @type {HeldSet} */ (this.heldQueue[this.heldHead++]);
      if (!oldest.gone) this.drop(oldest);
    }
  }

  /** Drops one held set (expired or over a cap), counted. */
  drop(h) {
    h.gone = true;
    this.heldCount--;
    this.heldBytes -= h.bytes.length;
    this.counters.expiredSets++;
    const list = this.heldByKey.get(h.key);
    if (!list) return;
    const at = list.indexOf(h);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.heldByKey.delete(h.key);
  }

  /** A data set: records of its template; held when the template is not known (yet). */
  dataSet(b, o, end, templateId, ctx, now, out) {
    const name = `${ctx.key}|${templateId}`;
    const template = this.templates.get(name);
    if (!template) {
      this.hold(b, o, end, templateId, ctx, now);
      return;
    }
    // Recently used: move to the end of the LRU order.
    this.templates.delete(name);
    this.templates.set(name, template);
    while (end - o >= template.minLength) {
      const next = template.options
        ? this.optionsRecord(b, o, end, template, ctx)
        : this.dataRecord(b, o, end, template, ctx, out);
      if (next < 0) {
        out.error = 'truncated-record';
        return;
      }
      o = next;
    }
    // Fewer bytes than a record are padding (RFC 7011 3.3.1; RFC 3954 5.3).
  }

  /** Length of a field in a record at `o` and where its value starts; [-1] when truncated. */
  fieldAt(b, o, end, field) {
    if (field.length !== 0xffff) return o + field.length <= end ? [o, field.length] : [-1, 0];
    if (o + 1 > end) return [-1, 0];
    let n = /** @type {number} */ (b[o]);
    let at = o + 1;
    if (n === 255) {
      if (o + 3 > end) return [-1, 0];
      n = uint(b, o + 1, 2);
      at = o + 3;
    }
    return at + n <= end ? [at, n] : [-1, 0];
  }

  /** One data record; returns the offset after it, or -1 when truncated. */
  dataRecord(b, o, end, template, ctx, out) {
    /** @type {Record<number, number>} */
    const n = {};
    let src = '';
    let dst = '';
    for (const field of template.fields) {
      const [at, length] = this.fieldAt(b, o, end, field);
      if (at < 0) return -1;
      o = at + length;
      if (field.enterprise || length === 0) continue;
      const id = field.id;
      if (id === F.srcIpv4 && length === 4) src = ipv4(b, at);
      else if (id === F.dstIpv4 && length === 4) dst = ipv4(b, at);
      else if (id === F.srcIpv6 && length === 16) src = ipv6(b, at);
      else if (id === F.dstIpv6 && length === 16) dst = ipv6(b, at);
      else if (length <= 8) n[id] = uint(b, at, length);
    }
    if (src === '' || dst === '') return o; // not a flow of addresses (e.g. MPLS only): skipped
    const rate = n[F.samplingInterval] ?? this.sampling.get(ctx.key) ?? 1;
    const factor = rate > 1 ? rate : 1;
    const times = this.timesOf(n, ctx);
    out.records.push({
      srcIp: src,
      dstIp: dst,
      srcPort: n[F.srcPort] ?? 0,
      dstPort: n[F.dstPort] ?? 0,
      protocol: n[F.protocol] ?? 0,
      bytes: (n[F.bytes] ?? n[F.bytesTotal] ?? 0) * factor,
      packets: (n[F.packets] ?? n[F.packetsTotal] ?? 0) * factor,
      startTime: times[0],
      endTime: times[1],
      vlan: n[F.vlan] ?? n[F.dot1qVlan] ?? null,
      inIface: n[F.inIface] ?? null,
      outIface: n[F.outIface] ?? null,
      tcpFlags: n[F.tcpFlags] ?? null,
      tos: n[F.tos] ?? null,
    });
    return o;
  }

  /** [start, end] in ms from whichever time fields the record carries (export time otherwise). */
  timesOf(n, ctx) {
    const pick = (sec, ms, us, ns, delta, uptime) => {
      if (n[ms] !== undefined) return n[ms];
      if (n[sec] !== undefined) return n[sec] * 1000;
      if (n[us] !== undefined) return ntpMillis(n[us]);
      if (n[ns] !== undefined) return ntpMillis(n[ns]);
      if (n[delta] !== undefined) return ctx.exportMs - Math.floor(n[delta] / 1000);
      if (n[uptime] !== undefined && ctx.uptimeMs !== null)
        return fromUptime(ctx.exportMs, ctx.uptimeMs, n[uptime]);
      return null;
    };
    const end =
      pick(F.endSeconds, F.endMillis, F.endMicros, F.endNanos, F.endDeltaMicros, F.lastUptime) ??
      ctx.exportMs;
    const start =
      pick(
        F.startSeconds,
        F.startMillis,
        F.startMicros,
        F.startNanos,
        F.startDeltaMicros,
        F.firstUptime,
      ) ?? end;
    return [start, end];
  }

  /** One options data record: keeps a sampling rate it announces. Returns the next offset or -1. */
  optionsRecord(b, o, end, template, ctx) {
    /** @type {Record<number, number>} */
    const n = {};
    for (let i = 0; i < template.fields.length; i++) {
      const field = /** @type {TemplateField} */ (template.fields[i]);
      const [at, length] = this.fieldAt(b, o, end, field);
      if (at < 0) return -1;
      o = at + length;
      if (i >= template.scopeCount && !field.enterprise && length > 0 && length <= 8)
        n[field.id] = uint(b, at, length);
    }
    const rate =
      n[F.samplingInterval] ??
      n[F.samplerRandomInterval] ??
      n[F.samplingPacketInterval] ??
      (n[F.samplingSize] && n[F.samplingPopulation]
        ? Math.round(n[F.samplingPopulation] / n[F.samplingSize])
        : undefined);
    if (rate !== undefined && rate >= 1) this.sampling.set(ctx.key, rate);
    return o;
  }
}

/** ms of an NTP-format 64-bit timestamp read as a Number (seconds since 1900 in the high word). */
function ntpMillis(value) {
  const seconds = Math.floor(value / TWO32);
  const fraction = value - seconds * TWO32;
  return (seconds - 2_208_988_800) * 1000 + Math.floor((fraction / TWO32) * 1000);
}
