/** Types of syslog-message.rules.mjs (plain JavaScript for the receiver's worker thread). */
export const MAX_MESSAGE: number;
export const MAX_FIELD: number;

export interface SyslogRecord {
  /** 0..23 */
  facility: number;
  /** 0..7 */
  severity: number;
  /** app-name / tag, else the sender's address */
  source: string;
  message: string;
  host: string | null;
  /** The sender's own timestamp (UTC ms), when it gave a readable one. */
  reportedAt: number | null;
  malformed: boolean;
}

export function parseSyslog(raw: string, sender: string, receivedAt: number): SyslogRecord;

export class SyslogFramer {
  constructor(onFrame: (frame: Buffer) => void, maxFrame?: number);
  push(chunk: Buffer): void;
  end(): void;
}
