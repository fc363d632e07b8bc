// @ts-check
/**
 * Syslog message parsing (RFC 5424 and RFC 3164 with its common variants), pure and total: every
 * input, whatever its bytes, gives a row to store; nothing here throws on input. Plain
 * JavaScript (types in syslog-message.rules.d.mts) because the receiver's worker thread
 * (syslog-receiver.engine.mjs) imports it under the build and Vitest alike.
 *
 * - RFC 5424: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [MSG]`, NILVALUE
 *   `-` for absent fields, a UTF-8 BOM before MSG dropped.
 * - RFC 3164: `<PRI>Mmm dd hh:mm:ss HOSTNAME TAG[PID]: MSG`, also with a year after the day or
 *   before the time (Cisco), an RFC 3339 timestamp (rsyslog), no timestamp, or no hostname. A
 *   timestamp without a year takes the receipt year (December's messages read in January take
 *   the year before); without a zone it is UTC.
 * - Anything else (no `<PRI>`, a PRI out of 0..191, an empty datagram): malformed, stored whole
 *   as the message with the sender's address as source, facility user (1), severity notice (5),
 *   the priority RFC 3164 section 4.3.3 gives a message without one.
 *
 * Bounds: the message is cut to MAX_MESSAGE characters, hostname and source to MAX_FIELD; the
 * parser looks at a bounded prefix for the header (no backtracking regex over the whole input),
 * so its time is linear in the input and tiny for any datagram (fuzzed: < 1 ms per 64 KB input).
 */

export const MAX_MESSAGE = 8192;
export const MAX_FIELD = 255;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** @param {string} text @param {number} max */
const cut = (text, max) => (text.length > max ? text.slice(0, max) : text);

/**
 * @typedef {object} SyslogRecord
 * @property {number} facility 0..23
 * @property {number} severity 0..7
 * @property {string} source app-name / tag, else the sender
 * @property {string} message
 * @property {string | null} host
 * @property {number | null} reportedAt the sender's timestamp (UTC ms), when it gave a readable one
 * @property {boolean} malformed
 */

/**
 * @param {string} raw the datagram or frame, decoded as UTF-8
 * @param {string} sender the sender's address
 * @param {number} receivedAt UTC ms
 * @returns {SyslogRecord}
 */
export function parseSyslog(raw, sender, receivedAt) {
  const text = stripTrailing(raw);
  const pri = /^<(\d{1,3})>/.exec(text);
  const value = pri ? Number(pri[1]) : NaN;
  if (!pri || value > 191) return malformed(text, sender);
  const facility = value >> 3;
  const severity = value & 7;
  const rest = text.slice(pri[0].length);
  if (/^[1-9]\d{0,2} /.test(rest)) {
    const parsed = parse5424(rest.slice(rest.indexOf(' ') + 1));
    if (parsed)
      return { facility, severity, ...parsed, source: parsed.source ?? cut(sender, MAX_FIELD) };
  }
  const parsed = parse3164(rest, receivedAt);
  return { facility, severity, ...parsed, source: parsed.source ?? cut(sender, MAX_FIELD) };
}

/** @param {string} text @param {string} sender @returns {SyslogRecord} */
function malformed(text, sender) {
  return {
    facility: 1,
    severity: 5,
    source: cut(sender, MAX_FIELD),
    message: cut(text, MAX_MESSAGE),
    host: null,
    reportedAt: null,
    malformed: true,
  };
}

/** Trailing newline, carriage return and NUL (what TCP framing and some senders leave). */
function stripTrailing(/** @type {string} */ text) {
  let end = text.length;
  while (end > 0) {
    const c = text.charCodeAt(end - 1);
    if (c === 10 || c === 13 || c === 0) end--;
    else break;
  }
  return end === text.length ? text : text.slice(0, end);
}

/** Splits off the next space-separated token (at most `max` characters looked at). */
function token(/** @type {string} */ text, /** @type {number} */ from) {
  const space = text.indexOf(' ', from);
  const end = space === -1 ? text.length : space;
  return { value: text.slice(from, end), next: space === -1 ? text.length : space + 1 };
}

const nil = (/** @type {string} */ v) => (v === '-' || v === '' ? null : v);

/**
 * @param {string} text what follows `<PRI>VERSION `
 * @returns {{source: string | null, message: string, host: string | null, reportedAt: number | null, malformed: boolean} | null}
 */
function parse5424(text) {
  let at = 0;
  const timestamp = token(text, at);
  at = timestamp.next;
  const host = token(text, at);
  at = host.next;
  const app = token(text, at);
  at = app.next;
  const procid = token(text, at);
  at = procid.next;
  const msgid = token(text, at);
  at = msgid.next;
  if (at >= text.length && msgid.value === '') return null;
  let reportedAt = null;
  if (timestamp.value !== '-') {
    reportedAt = rfc3339(timestamp.value);
    if (reportedAt === null) return null;
  }
  // STRUCTURED-DATA: `-` or one or more [id param="value" ...] elements (`]`, `"` and `\` escaped).
  let message = '';
  if (text[at] === '-') {
    message = text.slice(at + 2);
  } else if (text[at] === '[') {
    let i = at;
    while (text[i] === '[') {
      i++;
      let quoted = false;
      for (; i < text.length; i++) {
        const c = text[i];
        if (quoted) {
          if (c === '\\') i++;
          else if (c === '"') quoted = false;
        } else if (c === '"') quoted = true;
        else if (c === ']') break;
      }
      if (i >= text.length) return null;
      i++;
    }
    message = text.slice(i + 1);
  } else if (at < text.length) {
    return null;
  }
  if (message.charCodeAt(0) === 0xfeff) message = message.slice(1);
  return {
    source: nil(app.value) === null ? null : cut(app.value, MAX_FIELD),
    host: nil(host.value) === null ? null : cut(host.value, MAX_FIELD),
    message: cut(message, MAX_MESSAGE),
    reportedAt,
    malformed: false,
  };
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:?\d{2})?$/;

/** UTC ms of an RFC 3339 timestamp (a missing zone read as UTC), or null. */
function rfc3339(/** @type {string} */ text) {
  if (text.length > 40) return null;
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  const ms = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    Number(frac.slice(0, 3).padEnd(3, '0')),
  );
  if (!Number.isFinite(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23) return null;
  if (zone === 'Z' || zone === 'z') return ms;
  const digits = zone.slice(1).replace(':', '');
  const offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  return zone.startsWith('-') ? ms + offset : ms - offset;
}

// `Mmm dd [yyyy] hh:mm:ss[.ffffff]`, then optionally a zone name and/or a year in either order.
const BSD_TIME =
  /^([A-Z][a-z]{2}) {1,2}(\d{1,2})(?: (\d{4}))? (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?((?: (?:[A-Z]{3,4}|\d{4})){0,2}):? /;

/**
 * @param {string} text what follows `<PRI>`
 * @param {number} receivedAt
 * @returns {{source: string | null, message: string, host: string | null, reportedAt: number | null, malformed: boolean}}
 */
function parse3164(text, receivedAt) {
  let rest = text;
  let reportedAt = null;
  const head = rest.slice(0, 64);
  const bsd = BSD_TIME.exec(head);
  let timed = false;
  if (bsd) {
    const month = MONTHS.indexOf(/** @type {string} */ (bsd[1]));
    if (month >= 0) {
      const received = new Date(receivedAt);
      const given = bsd[3] ?? /\d{4}/.exec(bsd[7] ?? '')?.[0];
      let year = Number(given ?? received.getUTCFullYear());
      // No year: the receipt year, or the one before for a month well after the receipt month.
      if (given === undefined && month > received.getUTCMonth() + 1) year -= 1;
      const ms = Date.UTC(
        year,
        month,
        Number(bsd[2]),
        Number(bsd[4]),
        Number(bsd[5]),
        Number(bsd[6]),
      );
      if (Number.isFinite(ms)) reportedAt = ms;
      rest = rest.slice(bsd[0].length);
      timed = true;
    }
  } else {
    const iso = token(head, 0);
    const ms = iso.value.length >= 19 ? rfc3339(iso.value) : null;
    if (ms !== null) {
      reportedAt = ms;
      rest = rest.slice(iso.next);
      timed = true;
    }
  }
  let host = null;
  if (timed) {
    // HOSTNAME: present unless the next word is already the tag (`tag:` or `tag[pid]:`).
    const word = token(rest, 0);
    if (word.value !== '' && !/[:[\]]/.test(word.value) && word.next < rest.length) {
      host = cut(word.value, MAX_FIELD);
      rest = rest.slice(word.next);
    }
  }
  // TAG: up to 48 characters of [A-Za-z0-9_./-] then `[pid]` and/or `:`.
  const tag = /^([^\s:[\]]{1,48})(?:\[[^\]\s]{0,32}\])?: ?/.exec(rest.slice(0, 96));
  let source = null;
  if (tag) {
    source = cut(/** @type {string} */ (tag[1]), MAX_FIELD);
    rest = rest.slice(tag[0].length);
  }
  return { source, host, message: cut(rest, MAX_MESSAGE), reportedAt, malformed: false };
}

/**
 * RFC 6587 framing of a TCP stream: octet counting (`LEN SP MSG`) or newline-terminated frames,
 * decided per frame by its first byte (a digit 1-9 means octet counting). Holds at most
 * `maxFrame` bytes of an incomplete frame; a longer one is cut there and delivered.
 */
export class SyslogFramer {
  /** @param {(frame: Buffer) => void} onFrame @param {number} [maxFrame] */
  constructor(onFrame, maxFrame = 65536) {
    this.onFrame = onFrame;
    this.maxFrame = maxFrame;
    /** @type {Buffer} */
    this.pending = Buffer.alloc(0);
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    for (;;) {
      if (at >= buf.length) break;
      const first = buf[at];
      if (first !== undefined && first >= 0x31 && first <= 0x39) {
        const space = buf.indexOf(0x20, at);
        if (space !== -1 && space - at <= 6) {
          const digits = buf.toString('latin1', at, space);
          if (/^\d+$/.test(digits)) {
            const length = Number(digits);
            if (length > this.maxFrame) {
              // Not a sane frame length: treat the stream from here as newline framing.
            } else if (space + 1 + length <= buf.length) {
              this.onFrame(buf.subarray(space + 1, space + 1 + length));
              at = space + 1 + length;
              continue;
            } else break;
          }
        } else if (space === -1 && buf.length - at <= 6) break;
      }
      const newline = buf.indexOf(0x0a, at);
      if (newline === -1) {
        if (buf.length - at >= this.maxFrame) {
          this.onFrame(buf.subarray(at, at + this.maxFrame));
          at += this.maxFrame;
          continue;
        }
        break;
      }
      if (newline > at) this.onFrame(buf.subarray(at, newline));
      at = newline + 1;
    }
    this.pending = at >= buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(at));
    buf = this.pending;
  }

  /** The end of the stream: an unterminated last frame is delivered. */
  end() {
    if (this.pending.length > 0) this.onFrame(this.pending);
    this.pending = Buffer.alloc(0);
  }
}
