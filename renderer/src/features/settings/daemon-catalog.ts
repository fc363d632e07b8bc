/**
 * The variables each daemon accepts, for the "add variable" choice and the secret marks. The API
 * has no catalogue endpoint, and the console may not import appliance-core: this mirrors
 * `features/maintenance/daemons.catalog.ts` (docs/features/maintenance.md, "Daemons"). The
 * appliance stays the judge: a variable it does not know is refused with its own message.
 */
export interface CatalogVar {
  var: string;
  secret: boolean;
  description: string;
}
export const DAEMON_VARS: Readonly<Record<string, readonly CatalogVar[]>> = {
  syslog: [{ var: 'port', secret: false, description: 'UDP and TCP port (0 disables)' }],
  flows: [{ var: 'port', secret: false, description: 'UDP port of NetFlow/IPFIX (0 disables)' }],
  'ids-intake': [{ var: 'eve_file', secret: false, description: "Suricata's eve.json to follow" }],
  captures: [
    { var: 'max_active', secret: false, description: 'Captures running at once' },
    { var: 'disk_max_bytes', secret: false, description: 'Bytes of ended capture files kept' },
    { var: 'idle_seconds', secret: false, description: 'An unpolled ephemeral capture expires' },
  ],
  discovery: [
    { var: 'snmp_community', secret: true, description: 'SNMP v2c community tried last' },
    { var: 'snmp_port', secret: false, description: 'UDP port of that community (default 161)' },
  ],
  'alert-delivery': [
    { var: 'proxy_url', secret: false, description: 'HTTP proxy for webhook outlets' },
    { var: 'proxy_password', secret: true, description: 'Password of the HTTP proxy' },
  ],
};
