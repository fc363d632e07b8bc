import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseEventArgs } from './eventlog.js';
import { readJournal, severityOfPriority } from './eventlog-linux.js';

const fixtures = path.resolve(import.meta.dirname, '../../test/fixtures');
const journalRemote = [
  '/usr/lib/systemd/systemd-journal-remote',
  '/lib/systemd/systemd-journal-remote',
].find(existsSync);
const hasJournalctl = (() => {
  try {
    execFileSync('journalctl', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

// journalctl comes with Debian's systemd package (build/scripts/setup-debian.sh); CI requires it.
if (!hasJournalctl && process.env.REQUIRE_PEERS === '1')
  throw new Error('REQUIRE_PEERS=1: journalctl is not installed (Debian package: systemd)');

const work = mkdtempSync(path.join(tmpdir(), 'agent-journal-'));
let journalFile = '';
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  journalFile = path.join(work, 'fixture.journal');
  if (journalRemote) {
    // Built at test time from the export-format fixture (systemd-journal-remote, setup-debian.sh).
    execFileSync(
      journalRemote,
      [`--output=${journalFile}`, path.join(fixtures, 'journal.export')],
      { stdio: 'ignore' },
    );
  } else {
    // Without the tool: the same entries, checked in as a journal file built from journal.export.
    writeFileSync(journalFile, gunzipSync(readFileSync(path.join(fixtures, 'journal.journal.gz'))));
  }
});

const base = 1764800000000; // ms of the fixture's first entry

describe.runIf(hasJournalctl)('journal entries through journalctl --file', () => {
  it('maps every priority onto the event-log scale exactly', async () => {
    const rows = await readJournal(
      { since: base, until: base + 10_000, max: 100 },
      { file: journalFile },
    );
    expect(rows.map((r) => [r.data, r.severity])).toEqual([
      ['priority 0 emerg', 1],
      ['priority 1 alert', 1],
      ['priority 2 crit', 1],
      ['priority 3 err', 2],
      ['priority 4 warning', 3],
      ['priority 5 notice', 0],
      ['priority 6 info', 0],
      ['priority 7 debug', 5],
      ['no unit here', 0],
      ['no priority, no identifier', 0],
    ]);
    expect(rows[0]).toEqual({
      record_id: base * 1000,
      timestamp: base,
      event_id: 0,
      log: 'fixture.service',
      source: 'fixture',
      severity: 1,
      data: 'priority 0 emerg',
    });
    expect(rows[8]).toMatchObject({ log: 'kernel-ish', source: 'kernel-ish' });
    expect(rows[9]).toMatchObject({ log: 'journal', source: '' });
  });

  it('reads oldest first within [since, until] and stops at max', async () => {
    const window = await readJournal(
      { since: base + 3000, until: base + 5000, max: 100 },
      { file: journalFile },
    );
    expect(window.map((r) => r.timestamp)).toEqual([base + 3000, base + 4000, base + 5000]);
    const capped = await readJournal(
      { since: base, until: base + 10_000, max: 2 },
      { file: journalFile },
    );
    expect(capped.map((r) => r.data)).toEqual(['priority 0 emerg', 'priority 1 alert']);
  });
});

describe('eventlog arguments and priorities', () => {
  it('maps priorities without journalctl too', () => {
    expect(
      ['0', '1', '2', '3', '4', '5', '6', '7', undefined, 'x'].map(severityOfPriority),
    ).toEqual([1, 1, 1, 2, 3, 0, 0, 5, 0, 0]);
  });

  it('validates since, until and max, capping max at 5,000', () => {
    expect(parseEventArgs({ since: 1, until: 2, max: 99_999, query: 'System' })).toEqual({
      since: 1,
      until: 2,
      max: 5000,
      query: 'System',
      channel: 'System',
      levels: [],
      event_ids: [],
    });
    expect(
      parseEventArgs({
        since: 1,
        until: 2,
        channel: 'Security',
        levels: [1, 2],
        event_ids: [4625],
      }),
    ).toMatchObject({ channel: 'Security', levels: [1, 2], event_ids: [4625] });
    expect(() => parseEventArgs({ since: 1, until: 2, levels: ['1; Remove-Item'] })).toThrow(
      /levels/,
    );
    expect(() => parseEventArgs({ since: 1, until: 2, event_ids: [70000] })).toThrow(/event_ids/);
    expect(() => parseEventArgs({ since: 'yesterday' })).toThrow(/since/);
    expect(() => parseEventArgs({ since: 5, until: 1 })).toThrow(/until/);
    expect(() => parseEventArgs({ since: 1, until: 2, max: 0 })).toThrow(/max/);
  });
});
