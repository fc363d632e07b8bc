/**
 * Boot configuration: environment variables, each also a CLI flag of the same meaning.
 * Checked once at start; every bad key is listed in one error, and nothing is read from
 * the environment anywhere else.
 */
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ROOT_HELPER_DEFAULT_SOCKET } from '../host/root-helper.protocol.js';
import { parseAllowList } from '../net/outbound.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A collector's port: a number (0 disables) or `auto` (an ephemeral port, for tests and the desktop). */
const CollectorPort = Type.Union([
  Type.Integer({ minimum: 0, maximum: 65535 }),
  Type.Literal('auto'),
]);
export type CollectorPortSetting = number | 'auto';

export const ConfigSchema = Type.Object({
  dataDir: Type.String({ minLength: 1 }),
  bind: Type.String({ minLength: 1 }),
  httpsPort: Type.Integer({ minimum: 0, maximum: 65535 }),
  syslogPort: CollectorPort,
  netflowPort: CollectorPort,
  collectorBind: Type.Optional(Type.String({ minLength: 1 })),
  adminPassword: Type.Optional(Type.String({ minLength: 1 })),
  logLevel: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l))),
  loginTokenTtlHours: Type.Integer({ minimum: 1, maximum: 8760 }),
  trustedProxies: Type.Array(Type.String({ minLength: 1 })),
  speedtestUrl: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  geoipUrl: Type.Optional(Type.String({ pattern: '^(off|https?://[^\\s]*\\{ip\\}[^\\s]*)$' })),
  terminal: Type.Union([Type.Literal('on'), Type.Literal('off')]),
  urlAllowPrivate: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  toolRunsPerUser: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  toolRunsTotal: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
  whoisServer: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9.-]*(:[0-9]{1,5})?$|^\\[[0-9A-Fa-f:]+\\](:[0-9]{1,5})?$',
    }),
  ),
  publicOrigin: Type.Optional(Type.String({ minLength: 1 })),
  eveFile: Type.Optional(Type.String({ minLength: 1 })),
  tablespaces: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]{0,30}=/.*$' })),
  outletAllow: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  captureMax: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  captureDiskMax: Type.Optional(Type.Integer({ minimum: 1_048_576 })),
  captureEngine: Type.Optional(
    Type.Union([Type.Literal('auto'), Type.Literal('dumpcap'), Type.Literal('cap')]),
  ),
  captureIdleSeconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 86400 })),
  networkMode: Type.Optional(Type.Union([Type.Literal('apply'), Type.Literal('dry-run')])),
  rootHelperSocket: Type.Optional(Type.String({ pattern: '^/[^\\x00]*$', maxLength: 107 })),
  retentionIntervalSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400 })),
  agentInstallers: Type.Optional(Type.String({ minLength: 1 })),
  agentUdpPort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  agentSourceIps: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }))),
});
export type ApplianceConfig = Static<typeof ConfigSchema>;

interface Setting {
  key: keyof ApplianceConfig;
  env: string;
  flag: string;
  kind: 'string' | 'integer' | 'port' | 'list';
  default?: string;
  help: string;
}

/** The configuration table; the README's table is written from the same entries. */
export const SETTINGS: readonly Setting[] = [
  {
    key: 'dataDir',
    env: 'APPLIANCE_DATA_DIR',
    flag: '--data-dir',
    kind: 'string',
    default: './data',
    help: 'Data directory: database, secret key, TLS certificate',
  },
  {
    key: 'bind',
    env: 'APPLIANCE_BIND',
    flag: '--bind',
    kind: 'string',
    default: '127.0.0.1',
    help: 'Address the HTTPS API listens on',
  },
  {
    key: 'httpsPort',
    env: 'APPLIANCE_HTTPS_PORT',
    flag: '--https-port',
    kind: 'integer',
    default: '8443',
    help: 'HTTPS port (0 picks a free one)',
  },
  {
    key: 'syslogPort',
    env: 'APPLIANCE_SYSLOG_PORT',
    flag: '--syslog-port',
    kind: 'port',
    default: '5514',
    help: 'Syslog UDP and TCP port (0 disables; auto binds a free one, TCP on the number UDP got)',
  },
  {
    key: 'netflowPort',
    env: 'APPLIANCE_NETFLOW_PORT',
    flag: '--netflow-port',
    kind: 'port',
    default: '2055',
    help: 'NetFlow/IPFIX UDP port (0 disables; auto binds a free one)',
  },
  {
    key: 'collectorBind',
    env: 'APPLIANCE_COLLECTOR_BIND',
    flag: '--collector-bind',
    kind: 'string',
    help: 'Address the syslog and NetFlow collectors listen on; APPLIANCE_BIND when unset',
  },
  {
    key: 'adminPassword',
    env: 'APPLIANCE_ADMIN_PASSWORD',
    flag: '--admin-password',
    kind: 'string',
    help: 'Initial password of user 1 (first start only); random when unset',
  },
  {
    key: 'logLevel',
    env: 'APPLIANCE_LOG_LEVEL',
    flag: '--log-level',
    kind: 'string',
    default: 'info',
    help: 'fatal, error, warn, info, debug, trace or silent',
  },
  {
    key: 'loginTokenTtlHours',
    env: 'APPLIANCE_LOGIN_TOKEN_TTL_HOURS',
    flag: '--login-token-ttl-hours',
    kind: 'integer',
    default: '12',
    help: 'Lifetime of tokens issued by POST /api/login, in hours',
  },
  {
    key: 'trustedProxies',
    env: 'APPLIANCE_TRUSTED_PROXIES',
    flag: '--trusted-proxies',
    kind: 'list',
    default: '',
    help: 'Comma-separated proxy addresses/CIDRs whose X-Forwarded-* headers are honoured',
  },
  {
    key: 'speedtestUrl',
    env: 'APPLIANCE_SPEEDTEST_URL',
    flag: '--speedtest-url',
    kind: 'string',
    help: 'Speed-test server (GET /__down?bytes=N, POST /__up); https://speed.cloudflare.com when unset',
  },
  {
    key: 'geoipUrl',
    env: 'APPLIANCE_GEOIP_URL',
    flag: '--geoip-url',
    kind: 'string',
    help: 'External geolocation lookup URL with {ip}, or off; https://freeipapi.com/api/json/{ip} when unset',
  },
  {
    key: 'whoisServer',
    env: 'APPLIANCE_WHOIS_SERVER',
    flag: '--whois-server',
    kind: 'string',
    help: 'whois server as host or host:port; whois picks the registry when unset',
  },
  {
    key: 'terminal',
    env: 'APPLIANCE_TERMINAL',
    flag: '--terminal',
    kind: 'string',
    default: 'on',
    help: 'The console terminal (a shell on the appliance for sa users): on or off',
  },
  {
    key: 'publicOrigin',
    env: 'APPLIANCE_PUBLIC_ORIGIN',
    flag: '--public-origin',
    kind: 'string',
    help: 'The origin clients reach the appliance at (https://host[:port]); used instead of the Host header in OAuth discovery, device-flow links and WWW-Authenticate',
  },
  {
    key: 'urlAllowPrivate',
    env: 'APPLIANCE_URL_ALLOW_PRIVATE',
    flag: '--url-allow-private',
    kind: 'string',
    default: 'on',
    help: 'URL monitoring may reach loopback and private addresses: on or off (link-local and cloud metadata addresses are always refused)',
  },
  {
    key: 'toolRunsPerUser',
    env: 'APPLIANCE_TOOL_RUNS_PER_USER',
    flag: '--tool-runs-per-user',
    kind: 'integer',
    default: '4',
    help: 'On-box tool runs (ping and MTR streams, traceroute, port scans, walks ...) one user may have at once',
  },
  {
    key: 'toolRunsTotal',
    env: 'APPLIANCE_TOOL_RUNS_TOTAL',
    flag: '--tool-runs-total',
    kind: 'integer',
    default: '16',
    help: 'On-box tool runs the appliance allows at once, all users together',
  },
  {
    key: 'eveFile',
    env: 'APPLIANCE_EVE_FILE',
    flag: '--eve-file',
    kind: 'string',
    help: "Suricata's eve.json to follow for IDS events (alert events are stored); unset disables IDS intake",
  },
  {
    key: 'tablespaces',
    env: 'APPLIANCE_TABLESPACES',
    flag: '--tablespaces',
    kind: 'list',
    default: '',
    help: 'Tablespaces for old partitions, comma-separated name=/absolute/dir (each directory holds one database file, attached at start)',
  },
  {
    key: 'outletAllow',
    env: 'APPLIANCE_OUTLET_ALLOW',
    flag: '--outlet-allow',
    kind: 'list',
    default: '',
    help: 'Alert outlet destinations allowed despite the address policy, comma-separated hosts, *.suffixes, addresses and CIDRs (loopback, private, link-local, metadata, localhost and punycode hosts are refused otherwise)',
  },
  {
    key: 'captureMax',
    env: 'APPLIANCE_CAPTURE_MAX',
    flag: '--capture-max',
    kind: 'integer',
    default: '4',
    help: 'Packet captures running at once, all users together (1 to 64); past it POST /api/captures answers 503 too-many',
  },
  {
    key: 'captureDiskMax',
    env: 'APPLIANCE_CAPTURE_DISK_MAX',
    flag: '--capture-disk-max',
    kind: 'integer',
    default: '2147483648',
    help: 'Bytes of capture files kept in the data dir; past it the oldest ended captures are deleted',
  },
  {
    key: 'captureEngine',
    env: 'APPLIANCE_CAPTURE_ENGINE',
    flag: '--capture-engine',
    kind: 'string',
    default: 'auto',
    help: 'Packet capture engine: auto (dumpcap when it may capture, else cap), dumpcap or cap',
  },
  {
    key: 'captureIdleSeconds',
    env: 'APPLIANCE_CAPTURE_IDLE_SECONDS',
    flag: '--capture-idle-seconds',
    kind: 'integer',
    default: '60',
    help: 'An ephemeral capture whose chunks nobody polls for this long expires',
  },
  {
    key: 'networkMode',
    env: 'APPLIANCE_NETWORK_MODE',
    flag: '--network-mode',
    kind: 'string',
    default: 'dry-run',
    help: 'Host changes (network, hostname, time, systemd units): apply (through the root helper) or dry-run (validated, reported, never applied); the host package sets apply',
  },
  {
    key: 'rootHelperSocket',
    env: 'APPLIANCE_ROOT_HELPER_SOCKET',
    flag: '--root-helper-socket',
    kind: 'string',
    default: ROOT_HELPER_DEFAULT_SOCKET,
    help: "The root helper's Unix socket (absolute path), used in apply mode",
  },
  {
    key: 'retentionIntervalSeconds',
    env: 'APPLIANCE_RETENTION_INTERVAL_S',
    flag: '--retention-interval-s',
    kind: 'integer',
    default: '3600',
    help: 'How often the retention pruner runs (the first run falls at a random point of the first interval)',
  },
  {
    key: 'agentInstallers',
    env: 'APPLIANCE_AGENT_INSTALLERS',
    flag: '--agent-installers',
    kind: 'string',
    help: 'Folder of staged agent installers, one sub-folder per architecture (amd64, arm64) holding agent.tar.gz and agent.json; default <data dir>/agent-installers',
  },
  {
    key: 'agentUdpPort',
    env: 'APPLIANCE_AGENT_UDP_PORT',
    flag: '--agent-udp-port',
    kind: 'integer',
    default: '489',
    help: 'UDP port of the agents the appliance sends signed requests and adoption datagrams to',
  },
  {
    key: 'agentSourceIps',
    env: 'APPLIANCE_AGENT_SOURCE_IPS',
    flag: '--agent-source-ips',
    kind: 'list',
    default: '',
    help: "Comma-separated addresses agents accept the appliance's datagrams from (the key bundle's allowed_source_ips); default: the bind address when specific, else the host's non-link-local addresses",
  },
];

/**
 * An origin as RFC 6454 has it: http or https, a host, an optional port, nothing else (a lone
 * trailing slash is tolerated). Returns the serialised origin (`https://nms.example.net:8443`,
 * default port dropped, host lower case), or null when the text is not one.
 */
export function parseOrigin(text: string): string | null {
  const trimmed = text.trim();
  if (!/^https?:\/\/[^/?#\s]+\/?$/i.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (url.username !== '' || url.password !== '' || url.hostname === '') return null;
  return url.origin;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
  }
}

function parseFlags(argv: readonly string[], problems: string[]): Map<string, string> {
  const known = new Map(SETTINGS.map((s) => [s.flag, s]));
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (!known.has(flag)) {
      problems.push(`unknown option ${flag}`);
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) problems.push(`${flag} needs a value`);
    else values.set(flag, value);
  }
  return values;
}

/** Flags beat environment variables; both beat defaults. Throws ConfigError listing every bad key. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = [],
  cwd: string = process.cwd(),
): ApplianceConfig {
  const problems: string[] = [];
  const flags = parseFlags(argv, problems);
  const raw: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const text = flags.get(s.flag) ?? env[s.env] ?? s.default;
    if (text === undefined) continue;
    const source = flags.has(s.flag) ? s.flag : env[s.env] !== undefined ? s.env : 'default';
    if (s.kind === 'port' && text.trim() === 'auto') {
      raw[s.key] = 'auto';
    } else if (s.kind === 'integer' || s.kind === 'port') {
      if (!/^\d+$/.test(text.trim())) {
        problems.push(
          `${source}: "${text}" is not a whole number${s.kind === 'port' ? ' or auto' : ''}`,
        );
        continue;
      }
      raw[s.key] = Number(text.trim());
    } else if (s.kind === 'list') {
      raw[s.key] = text
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    } else raw[s.key] = text;
  }
  if (problems.length === 0) {
    for (const err of Value.Errors(ConfigSchema, raw)) {
      const setting = SETTINGS.find((s) => `/${s.key}` === err.path);
      problems.push(`${setting ? `${setting.env} (${setting.flag})` : err.path}: ${err.message}`);
    }
  }
  if (typeof raw.publicOrigin === 'string') {
    const origin = parseOrigin(raw.publicOrigin);
    if (origin === null)
      problems.push(
        `APPLIANCE_PUBLIC_ORIGIN (--public-origin): "${raw.publicOrigin}" is not an origin: http or https, a host and an optional port, no path, query or credentials (for example https://nms.example.net:8443)`,
      );
    else raw.publicOrigin = origin;
  }
  if (Array.isArray(raw.outletAllow)) {
    try {
      parseAllowList(raw.outletAllow as string[]);
    } catch (err) {
      problems.push(`APPLIANCE_OUTLET_ALLOW (--outlet-allow): ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const config = raw as ApplianceConfig;
  config.dataDir = path.resolve(cwd, config.dataDir);
  if (config.eveFile !== undefined) config.eveFile = path.resolve(cwd, config.eveFile);
  config.agentInstallers = path.resolve(
    cwd,
    config.agentInstallers ?? path.join(config.dataDir, 'agent-installers'),
  );
  return config;
}
