/**
 * The system programs the appliance runs, with the Debian package that provides each, so a
 * missing one is reported by name ("nmap is not installed (Debian package nmap)").
 */

export interface SystemTool {
  program: string;
  debianPackage: string;
}

export const SYSTEM_TOOLS = {
  ping: { program: 'ping', debianPackage: 'iputils-ping' },
  fping: { program: 'fping', debianPackage: 'fping' },
  mtr: { program: 'mtr', debianPackage: 'mtr-tiny' },
  traceroute: { program: 'traceroute', debianPackage: 'traceroute' },
  tracepath: { program: 'tracepath', debianPackage: 'iputils-tracepath' },
  nmap: { program: 'nmap', debianPackage: 'nmap' },
  iperf3: { program: 'iperf3', debianPackage: 'iperf3' },
  whois: { program: 'whois', debianPackage: 'whois' },
  ip: { program: 'ip', debianPackage: 'iproute2' },
  systemctl: { program: 'systemctl', debianPackage: 'systemd' },
} as const satisfies Record<string, SystemTool>;

export type SystemToolName = keyof typeof SYSTEM_TOOLS;
