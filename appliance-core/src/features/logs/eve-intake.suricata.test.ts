/**
 * The IDS intake against real Suricata (Debian 12: bookworm-backports; setup-debian.sh), offline:
 * pcaps written by the harness (TCP conversations on 127.0.0.0/8, nothing sent on a network),
 * a small rule file, and an appliance (in process, the real composition root) following the
 * eve.json Suricata writes:
 * - `suricata -r`: every alert line stored once with the spec's columns and the device
 *   enrichment of device 1 (127.0.0.1, seeded at first start);
 * - a live Suricata (`--pcap-file-continuous`): rename, lines still written to the renamed file,
 *   SIGHUP, lines in the new file: each stored once, in order;
 * - a truncated eve.json that Suricata keeps appending to: read again from its start.
 * Skipped with a message when suricata is missing, failed under REQUIRE_PEERS=1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAppliance, type Harness } from '../../../../test/harness/appliance.js';
import { havePeer } from '../../../../test/harness/peers.js';
import {
  rule,
  runSuricata,
  startLiveSuricata,
  type LiveSuricata,
  type TcpExchange,
  writePcap,
} from '../../../../test/harness/suricata.js';

const haveSuricata = havePeer('suricata', 'suricata');

const RULES = [
  rule(1000001, 'EVIL-ONE', 1),
  rule(1000002, 'EVIL-TWO', 2),
  rule(1000003, 'EVIL-THREE', 3),
  rule(1000004, 'EVIL-FOUR', 4),
];

const exchange = (n: number, payload: string, extra: Partial<TcpExchange> = {}): TcpExchange => ({
  src: '127.0.0.1',
  dst: '127.0.0.2',
  srcPort: 40000 + n,
  dstPort: 8000 + n,
  payload,
  ...extra,
});

let dir: string | null = null;
let h: Harness | null = null;
let suricata: LiveSuricata | null = null;

afterEach(async () => {
  await suricata?.stop();
  await h?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  suricata = null;
  h = null;
  dir = null;
});

function tempDir(): string {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eve-suricata-'));
  return dir;
}

interface Row {
  id: number;
  raw: string;
  signature_id: number;
  severity: number;
  vlan: number | null;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  src_id: number | null;
  src_host: string | null;
  proto: string;
  timestamp: number;
}

const rows = (): Row[] =>
  (h as Harness).appliance.db.prepare('SELECT * FROM eve_log_latest ORDER BY id').all() as Row[];

async function untilRows(count: number, timeoutMs = 30_000): Promise<Row[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = rows();
    if (now.length >= count) return now;
    if (Date.now() > deadline) throw new Error(`${now.length} of ${count} rows in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(haveSuricata)('IDS intake with real Suricata', () => {
  it('stores every alert of suricata -r once, with the spec columns and device enrichment', async () => {
    const work = tempDir();
    const pcap = path.join(work, 'in.pcap');
    writePcap(pcap, [
      exchange(1, 'EVIL-ONE'),
      exchange(2, 'EVIL-TWO', { src: '127.0.0.3', vlan: 42 }),
      exchange(3, 'EVIL-THREE'),
      exchange(4, 'EVIL-FOUR', { src: '127.0.0.4' }),
      exchange(5, 'harmless'),
    ]);
    const run = await runSuricata({ pcap, rules: RULES, dir: work });
    expect(run.alertLines).toHaveLength(4);
    h = await startAppliance({ APPLIANCE_EVE_FILE: run.eve });
    const stored = await untilRows(4);
    await new Promise((r) => setTimeout(r, 300));
    expect(rows()).toHaveLength(4);
    const bySid = new Map(stored.map((r) => [r.signature_id, r]));
    for (const line of run.alertLines) {
      const eve = JSON.parse(line) as {
        alert: { signature_id: number; severity: number };
        src_ip: string;
        src_port: number;
        dest_ip: string;
        dest_port: number;
        vlan?: number[];
      };
      const row = bySid.get(eve.alert.signature_id) as Row;
      expect(row.raw).toBe(line);
      expect(row.severity).toBe(Math.min(eve.alert.severity, 3));
      expect([row.src_ip, row.src_port, row.dst_ip, row.dst_port]).toEqual([
        eve.src_ip,
        eve.src_port,
        eve.dest_ip,
        eve.dest_port,
      ]);
      expect(row.vlan).toBe(eve.vlan?.[0] ?? null);
      expect(row.proto).toBe('TCP');
    }
    // Suricata's severity 4 is stored as 3; device 1 (127.0.0.1) enriches its endpoints.
    expect(bySid.get(1000004)?.severity).toBe(3);
    const device1 = h.appliance.db.prepare('SELECT label FROM devices WHERE id = 1').get() as {
      label: string;
    };
    expect(bySid.get(1000001)).toMatchObject({ src_id: 1, src_host: device1.label });
    expect(bySid.get(1000002)).toMatchObject({ src_id: null, src_host: null, vlan: 42 });
    expect(bySid.get(1000001)?.timestamp).toBe(
      Date.parse(
        (JSON.parse(run.alertLines[0] as string) as { timestamp: string }).timestamp.replace(
          '+0000',
          'Z',
        ),
      ),
    );
    // The rollup counts what the rows hold.
    const rollup = h.appliance.db
      .prepare('SELECT sum(count) AS n FROM eve_minute_rollup')
      .get() as { n: number };
    expect(rollup.n).toBe(4);
  }, 60_000);

  it('follows a live Suricata through rename and SIGHUP: every alert once, in order', async () => {
    const work = tempDir();
    suricata = await startLiveSuricata({ dir: work, rules: RULES });
    h = await startAppliance({ APPLIANCE_EVE_FILE: suricata.eve });
    suricata.feed([exchange(1, 'EVIL-ONE')]);
    await untilRows(1);
    // logrotate: rename; Suricata keeps writing the renamed file until it is told.
    fs.renameSync(suricata.eve, `${suricata.eve}.1`);
    suricata.feed([exchange(2, 'EVIL-TWO'), exchange(3, 'EVIL-THREE')]);
    const old = await suricata.waitForAlerts(3, `${suricata.eve}.1`);
    await untilRows(3);
    // postrotate: SIGHUP; Suricata reopens eve.json and writes there.
    suricata.hup();
    suricata.feed([exchange(4, 'EVIL-FOUR')]);
    const fresh = await suricata.waitForAlerts(1);
    await untilRows(4);
    await new Promise((r) => setTimeout(r, 500));
    expect(rows().map((r) => r.raw)).toEqual([...old, ...fresh]);
  }, 90_000);

  it('reads a truncated eve.json again from its start while Suricata appends to it', async () => {
    const work = tempDir();
    suricata = await startLiveSuricata({ dir: work, rules: RULES });
    h = await startAppliance({ APPLIANCE_EVE_FILE: suricata.eve });
    suricata.feed([exchange(1, 'EVIL-ONE'), exchange(2, 'EVIL-TWO')]);
    const before = await suricata.waitForAlerts(2);
    await untilRows(2);
    fs.truncateSync(suricata.eve, 0);
    suricata.feed([exchange(3, 'EVIL-THREE')]);
    const after = await suricata.waitForAlerts(1);
    await untilRows(3);
    await new Promise((r) => setTimeout(r, 500));
    expect(rows().map((r) => r.raw)).toEqual([...before, ...after]);
  }, 90_000);
});
