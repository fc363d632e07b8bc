/**
 * Command line of the agent:
 *
 *   node agent/dist/cli.js --server https://… --state-dir DIR [--enroll TOKEN] [--adoption-key KEY]
 *     [--udp-port N] [--bind ADDR] [--ca FILE | --pin SHA256] [--interval S] [--release-key B64U]
 *     [--journal-file FILE]
 *
 * Secrets (the enrollment token, the adoption key) may also come from the environment
 * (NETMON_AGENT_ENROLL_TOKEN, NETMON_AGENT_ADOPTION_KEY) so they stay out of process listings.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';

import { normalizePin } from './http-client.js';
import { ADOPTION_KEY_PATTERN } from './state.js';

export interface AgentConfig {
  server: string;
  stateDir: string;
  enrollToken?: string;
  adoptionKey?: string;
  udpPort: number;
  bind?: string;
  ca?: string;
  pin?: string;
  intervalMs: number;
  releaseKey?: string;
  journalFile?: string;
}

export const DEFAULT_UDP_PORT = 489;

export class ConfigError extends Error {}

/**
 * Every option takes a value, and tokens, adoption keys and release keys are base64url or
 * similar text that may start with `-`, which parseArgs reads as another option ("argument is
 * ambiguous"): `--name value` is joined into `--name=value` first, whatever the value.
 */
function joinValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (/^--[a-z-]+$/.test(arg) && next !== undefined) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): AgentConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: joinValues(argv),
      strict: true,
      options: {
        server: { type: 'string' },
        'state-dir': { type: 'string' },
        enroll: { type: 'string' },
        'adoption-key': { type: 'string' },
        'udp-port': { type: 'string' },
        bind: { type: 'string' },
        ca: { type: 'string' },
        pin: { type: 'string' },
        interval: { type: 'string' },
        'release-key': { type: 'string' },
        'journal-file': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const server = values.server;
  if (!server) throw new ConfigError('--server https://… is required');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new ConfigError('--server must be a URL');
  }
  if (url.protocol !== 'https:') throw new ConfigError('--server must be an https:// URL');
  const stateDir = values['state-dir'];
  if (!stateDir) throw new ConfigError('--state-dir DIR is required');
  const enrollToken = values.enroll ?? env.NETMON_AGENT_ENROLL_TOKEN;
  if (enrollToken !== undefined && !/^[\x21-\x7e]{32,128}$/.test(enrollToken))
    throw new ConfigError('--enroll: a token of 32 to 128 characters');
  const adoptionKey = values['adoption-key'] ?? env.NETMON_AGENT_ADOPTION_KEY;
  if (adoptionKey !== undefined && !ADOPTION_KEY_PATTERN.test(adoptionKey))
    throw new ConfigError('--adoption-key: 10 to 64 of letters, digits, _ and -');
  const udpPort = Number(values['udp-port'] ?? DEFAULT_UDP_PORT);
  if (!Number.isInteger(udpPort) || udpPort < 0 || udpPort > 65535)
    throw new ConfigError('--udp-port: 0 to 65535 (0 picks a free port)');
  if (values.bind !== undefined && !isIP(values.bind))
    throw new ConfigError('--bind: an IP address');
  if (values.ca && values.pin) throw new ConfigError('--ca and --pin exclude each other');
  if (values.pin && !normalizePin(values.pin))
    throw new ConfigError('--pin: a SHA-256 fingerprint (64 hex digits, colons allowed)');
  let ca: string | undefined;
  if (values.ca) {
    try {
      ca = readFileSync(values.ca, 'utf8');
    } catch {
      throw new ConfigError(`--ca: cannot read ${values.ca}`);
    }
  }
  const interval = Number(values.interval ?? 60);
  if (!Number.isFinite(interval) || interval < 1 || interval > 86_400)
    throw new ConfigError('--interval: 1 to 86400 seconds');
  return {
    server,
    stateDir,
    ...(enrollToken !== undefined ? { enrollToken } : {}),
    ...(adoptionKey !== undefined ? { adoptionKey } : {}),
    udpPort,
    ...(values.bind !== undefined ? { bind: values.bind } : {}),
    ...(ca !== undefined ? { ca } : {}),
    ...(values.pin !== undefined ? { pin: values.pin } : {}),
    intervalMs: interval * 1000,
    ...(values['release-key'] !== undefined ? { releaseKey: values['release-key'] } : {}),
    ...(values['journal-file'] !== undefined ? { journalFile: values['journal-file'] } : {}),
  };
}
