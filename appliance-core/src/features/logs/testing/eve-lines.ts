/**
 * Real eve.json lines for the IDS intake's tests: written by Suricata 7.0.10 (Debian
 * bookworm-backports) running `suricata -r` on the harness's pcap (test/harness/suricata.ts:
 * two TCP conversations on 127.0.0.0/8, the second tagged VLAN 42; rules with priority 1 and 4).
 */
export const SURICATA_ALERT =
  '{"timestamp":"2026-11-26T10:00:00.006000+0000","flow_id":1630060595,"pcap_cnt":7,"event_type":"alert","src_ip":"127.0.0.1","src_port":40000,"dest_ip":"127.0.0.2","dest_port":8080,"proto":"TCP","pkt_src":"wire/pcap","alert":{"action":"allowed","gid":1,"signature_id":1000001,"rev":1,"signature":"test EVIL-ONE","category":"Misc activity","severity":1},"direction":"to_server","flow":{"pkts_toserver":5,"pkts_toclient":2,"bytes_toserver":278,"bytes_toclient":110,"start":"2026-11-26T10:00:00.000000+0000","src_ip":"127.0.0.1","dest_ip":"127.0.0.2","src_port":40000,"dest_port":8080}}';
/** Severity 4 (stored as 3), VLAN 42, a flow id beyond 2^32. */
export const SURICATA_ALERT_VLAN =
  '{"timestamp":"2026-11-26T10:00:00.015000+0000","flow_id":38655082457604,"pcap_cnt":16,"event_type":"alert","vlan":[42],"src_ip":"127.0.0.3","src_port":40001,"dest_ip":"127.0.0.2","dest_port":8081,"proto":"TCP","pkt_src":"wire/pcap","alert":{"action":"allowed","gid":1,"signature_id":1000002,"rev":1,"signature":"test EVIL-TWO","category":"Misc activity","severity":4},"direction":"to_server","flow":{"pkts_toserver":5,"pkts_toclient":2,"bytes_toserver":298,"bytes_toclient":118,"start":"2026-11-26T10:00:00.009000+0000","src_ip":"127.0.0.3","dest_ip":"127.0.0.2","src_port":40001,"dest_port":8081}}';
export const SURICATA_FLOW =
  '{"timestamp":"2026-11-26T10:00:00.017000+0000","flow_id":38655082457604,"event_type":"flow","vlan":[42],"src_ip":"127.0.0.3","src_port":40001,"dest_ip":"127.0.0.2","dest_port":8081,"proto":"TCP","flow":{"pkts_toserver":6,"pkts_toclient":3,"bytes_toserver":356,"bytes_toclient":176,"start":"2026-11-26T10:00:00.009000+0000","end":"2026-11-26T10:00:00.017000+0000","age":0,"state":"closed","reason":"shutdown","alerted":true},"tcp":{"tcp_flags":"1b","tcp_flags_ts":"1b","tcp_flags_tc":"1b","syn":true,"fin":true,"psh":true,"ack":true,"state":"closed","ts_max_regions":1,"tc_max_regions":1}}';
export const SURICATA_FLOW_2 =
  '{"timestamp":"2026-11-26T10:00:00.017000+0000","flow_id":1630060595,"event_type":"flow","src_ip":"127.0.0.1","src_port":40000,"dest_ip":"127.0.0.2","dest_port":8080,"proto":"TCP","flow":{"pkts_toserver":6,"pkts_toclient":3,"bytes_toserver":332,"bytes_toclient":164,"start":"2026-11-26T10:00:00.000000+0000","end":"2026-11-26T10:00:00.008000+0000","age":0,"state":"closed","reason":"shutdown","alerted":true},"tcp":{"tcp_flags":"1b","tcp_flags_ts":"1b","tcp_flags_tc":"1b","syn":true,"fin":true,"psh":true,"ack":true,"state":"closed","ts_max_regions":1,"tc_max_regions":1}}';

export const REAL_EVE_LINES: readonly string[] = [
  SURICATA_ALERT,
  SURICATA_ALERT_VLAN,
  SURICATA_FLOW,
  SURICATA_FLOW_2,
];

/** A real alert line with fields replaced (`alert` members go into `alert`). */
export function alertLine(
  top: Record<string, unknown> = {},
  alert: Record<string, unknown> = {},
  base: string = SURICATA_ALERT,
): string {
  const doc = JSON.parse(base) as Record<string, unknown>;
  return JSON.stringify({
    ...doc,
    ...top,
    alert: { ...(doc.alert as Record<string, unknown>), ...alert },
  });
}
