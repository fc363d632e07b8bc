/**
 * The daemon catalogue (spec part 3, "Data maintenance": the daemon endpoints). The daemons are
 * the engines the composition root registers in the engine registry, except the shared
 * resources (the storage writer and the scheduler, never restarted alone): whatever engines a
 * build registers appear, so a later engine joins without a change here. This catalogue names
 * the variables each daemon accepts, which of them are secret, and how each is validated; a
 * daemon it does not name accepts no variable (its `config` is always empty).
 *
 * Every value is text of at most 1024 characters without control characters (no newline, no
 * NUL ever reaches a configuration file or a log line), checked again by the variable's own rule.
 */

export interface DaemonVarSpec {
  var: string;
  /** Stored sealed by the secret box; read back as the sentinel, never as text. */
  secret?: boolean;
  /** What the value must look like (the whole value), with the message of a mismatch. */
  rule?: { pattern: RegExp; message: string };
  description: string;
}

const PORT = {
  pattern: /^(?:0|[1-9][0-9]{0,4})$/,
  message: 'must be a port number from 0 to 65535',
};
const COUNT = { pattern: /^[1-9][0-9]{0,8}$/, message: 'must be a whole number of at least 1' };
const PATH = {
  pattern: /^\/[A-Za-z0-9._/-]{0,1022}$/,
  message: 'must be an absolute path of letters, digits and . _ - /',
};
const URL = {
  pattern:
    /^https?:\/\/(?:[A-Za-z0-9._~-]{1,64}@)?[A-Za-z0-9.:[\]-]+(?::[0-9]{1,5})?(?:\/[A-Za-z0-9._~/-]*)?$/,
  message: 'must be an http or https URL (a user name may precede the host, never a password)',
};

export const DAEMON_CATALOG: Readonly<Record<string, readonly DaemonVarSpec[]>> = {
  syslog: [{ var: 'port', rule: PORT, description: 'UDP and TCP port (0 disables the receiver)' }],
  flows: [{ var: 'port', rule: PORT, description: 'UDP port of NetFlow/IPFIX (0 disables)' }],
  'ids-intake': [{ var: 'eve_file', rule: PATH, description: "Suricata's eve.json to follow" }],
  captures: [
    { var: 'max_active', rule: COUNT, description: 'Captures running at once' },
    { var: 'disk_max_bytes', rule: COUNT, description: 'Bytes of ended capture files kept' },
    { var: 'idle_seconds', rule: COUNT, description: 'An unpolled ephemeral capture expires' },
  ],
  discovery: [
    {
      var: 'snmp_community',
      secret: true,
      description: 'SNMP v2c community tried on hosts no credential answers',
    },
    { var: 'snmp_port', rule: PORT, description: 'UDP port of that community (default 161)' },
  ],
  'alert-delivery': [
    {
      var: 'proxy_url',
      rule: URL,
      description: 'HTTP proxy for webhook outlets (http://[user@]host:port)',
    },
    {
      var: 'proxy_password',
      secret: true,
      description: 'Password of the HTTP proxy (sent as Proxy-Authorization: Basic)',
    },
  ],
};

export const MAX_VALUE_LENGTH = 1024;
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** The variables a daemon accepts (none for a daemon the catalogue does not name). */
export function varsOf(daemon: string): readonly DaemonVarSpec[] {
  return Object.hasOwn(DAEMON_CATALOG, daemon) ? (DAEMON_CATALOG[daemon] ?? []) : [];
}
