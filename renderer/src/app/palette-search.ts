/**
 * What the command palette finds for a query: tool commands ("ping 127.0.0.2"), pages, devices
 * by name or IP. Pure, so it is tested without a DOM.
 */
export interface PaletteItem {
  id: string;
  kind: 'tool' | 'page' | 'device';
  label: string;
  detail?: string;
  to: string;
}

export const TOOL_COMMANDS: { words: string[]; tool: string; label: string }[] = [
  { words: ['ping'], tool: 'ping', label: 'Ping' },
  { words: ['mtr'], tool: 'mtr', label: 'MTR' },
  { words: ['trace', 'traceroute', 'tracert'], tool: 'traceroute', label: 'Traceroute' },
  { words: ['scan', 'portscan', 'nmap'], tool: 'portscan', label: 'Port scan' },
  { words: ['whois'], tool: 'whois', label: 'Whois' },
  { words: ['geoip', 'geo'], tool: 'geoip', label: 'GeoIP' },
  { words: ['iperf', 'iperf3'], tool: 'iperf', label: 'iperf3 client' },
];

export interface SearchInput {
  query: string;
  pages: { path: string; label: string }[];
  devices: { id: number; label: string; ip_address: string }[];
  canUseTools: boolean;
  limit?: number;
}

export function paletteResults(input: SearchInput): PaletteItem[] {
  const query = input.query.trim();
  const lower = query.toLowerCase();
  const items: PaletteItem[] = [];
  const [first = '', ...rest] = query.split(/\s+/);
  const target = rest.join(' ').trim();
  if (input.canUseTools) {
    const command = TOOL_COMMANDS.find((c) => c.words.includes(first.toLowerCase()));
    if (command && target !== '') {
      items.push({
        id: `tool:${command.tool}:${target}`,
        kind: 'tool',
        label: `${command.label} ${target}`,
        detail: 'Run now',
        to: `/tools/${command.tool}?target=${encodeURIComponent(target)}&run=1`,
      });
    } else if (query !== '') {
      for (const c of TOOL_COMMANDS)
        if (c.words.some((w) => w.startsWith(lower)) || c.label.toLowerCase().includes(lower))
          items.push({
            id: `tool:${c.tool}`,
            kind: 'tool',
            label: c.label,
            detail: `Type "${c.words[0]} <host>" to run`,
            to: `/tools/${c.tool}`,
          });
    }
  }
  for (const page of input.pages)
    if (lower === '' || page.label.toLowerCase().includes(lower))
      items.push({ id: `page:${page.path}`, kind: 'page', label: page.label, to: page.path });
  if (lower !== '') {
    const limit = input.limit ?? 10;
    let found = 0;
    for (const d of input.devices) {
      if (found >= limit) break;
      if (d.label.toLowerCase().includes(lower) || d.ip_address.toLowerCase().includes(lower)) {
        items.push({
          id: `device:${d.id}`,
          kind: 'device',
          label: d.label,
          detail: d.ip_address,
          to: `/devices/${d.id}`,
        });
        found++;
      }
    }
  }
  return items;
}
