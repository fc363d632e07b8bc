/**
 * The capture record as the API answers it (spec part 3 > Capture, plus the designed `engine`,
 * `reason`, `drops`, `ifaces`, `deadline_s`, `ephemeral`), and the download's file name.
 */
import { toIso } from '../../platform/time/time.js';
import type { CaptureRow } from './captures.repository.js';
import type { CaptureRecord } from './captures.schema.js';

const time = (ms: number | null) => (ms === null ? null : toIso(ms));

export function captureRecord(row: CaptureRow): CaptureRecord {
  return {
    id: row.id,
    user_id: row.user_id,
    device_id: row.device_id,
    label: row.label,
    filter: JSON.parse(row.filter) as CaptureRecord['filter'],
    status: row.status,
    started_at: time(row.started_at),
    ended_at: time(row.ended_at),
    expires_at: time(row.expires_at),
    packets: row.packets,
    bytes: row.bytes,
    byte_cap: row.byte_cap,
    created_at: toIso(row.created_at),
    deadline_s: row.deadline_s,
    ephemeral: row.ephemeral === 1,
    ifaces: JSON.parse(row.ifaces) as string[],
    engine: row.engine === 'dumpcap' || row.engine === 'cap' ? row.engine : null,
    drops: row.drops,
    reason: row.reason,
  };
}

/**
 * The attachment's name: from the label (letters, digits, `.`, `_`, `-`; others become `_`) or
 * `capture-<id>`, with `.pcapng`. `utf8` keeps the label's letters for `filename*`.
 */
export function downloadName(row: Pick<CaptureRow, 'id' | 'label'>): {
  ascii: string;
  utf8: string;
} {
  const label = (row.label ?? '').trim();
  const utf8Base = label.replace(/[\p{Cc}\p{Cf}/\\"]+/gu, '_').slice(0, 120);
  const asciiBase = label
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 120);
  const fallback = `capture-${row.id}`;
  return {
    ascii: `${asciiBase.replace(/_+$/, '') || fallback}.pcapng`,
    utf8: `${utf8Base || fallback}.pcapng`,
  };
}
