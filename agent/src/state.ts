/**
 * What the agent keeps in its state dir: its uuid (`agent.json`), the key bundle (`bundle.json`,
 * docs/agent-protocol.md §2) and, until adoption, the adoption key (`adoption-key`). The private
 * key is in `agent-key.pem` (keys.ts). Files holding secrets are written with mode 0600.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { serverIdOf } from './keys.js';

export interface UpdateOffer {
  version: string;
  url: string;
  sha256: string;
  signature: string;
}

export interface KeyBundle {
  server_id: string;
  server_url: string;
  public_key: string;
  allowed_source_ips: string[];
  device_id: number;
  update?: UpdateOffer;
}

export const ADOPTION_KEY_PATTERN = /^[A-Za-z0-9_-]{10,64}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A bundle read from the network or disk, checked member by member; null when malformed. */
export function parseBundle(value: unknown): KeyBundle | null {
  if (!isObject(value)) return null;
  const { server_id, server_url, public_key, allowed_source_ips, device_id, update } = value;
  if (typeof server_id !== 'string' || typeof server_url !== 'string') return null;
  if (typeof public_key !== 'string' || serverIdOf(public_key) !== server_id) return null;
  if (
    !Array.isArray(allowed_source_ips) ||
    !allowed_source_ips.every((ip) => typeof ip === 'string')
  )
    return null;
  if (typeof device_id !== 'number' || !Number.isInteger(device_id)) return null;
  try {
    const url = new URL(server_url);
    if (url.protocol !== 'https:') return null;
  } catch {
    return null;
  }
  const bundle: KeyBundle = {
    server_id,
    server_url,
    public_key,
    allowed_source_ips: allowed_source_ips,
    device_id,
  };
  if (update !== undefined) {
    if (!isObject(update)) return null;
    const { version, url, sha256, signature } = update;
    if (
      typeof version !== 'string' ||
      typeof url !== 'string' ||
      typeof sha256 !== 'string' ||
      typeof signature !== 'string'
    )
      return null;
    bundle.update = { version, url, sha256, signature };
  }
  return bundle;
}

function writeAtomic(file: string, text: string, mode = 0o600): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}

export class AgentState {
  readonly agentUuid: string;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, 'agent.json');
    let uuid: string | undefined;
    if (existsSync(file)) {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as { agent_uuid?: unknown };
      if (typeof stored.agent_uuid === 'string') uuid = stored.agent_uuid;
    }
    if (!uuid) {
      uuid = randomUUID();
      writeAtomic(file, JSON.stringify({ agent_uuid: uuid }) + '\n', 0o644);
    }
    this.agentUuid = uuid;
  }

  bundle(): KeyBundle | null {
    const file = path.join(this.dir, 'bundle.json');
    if (!existsSync(file)) return null;
    try {
      return parseBundle(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      return null;
    }
  }

  /**
   * Stores a bundle. One naming another appliance (`server_id`) than the stored one is refused
   * unless `reenroll` (the operator ran --enroll with a new token): §2.
   */
  storeBundle(bundle: KeyBundle, reenroll = false): boolean {
    const current = this.bundle();
    if (current && current.server_id !== bundle.server_id && !reenroll) return false;
    writeAtomic(path.join(this.dir, 'bundle.json'), JSON.stringify(bundle, null, 2) + '\n');
    return true;
  }

  adoptionKey(): string | null {
    const file = path.join(this.dir, 'adoption-key');
    if (!existsSync(file)) return null;
    const key = readFileSync(file, 'utf8').trim();
    return ADOPTION_KEY_PATTERN.test(key) ? key : null;
  }

  setAdoptionKey(key: string): void {
    if (!ADOPTION_KEY_PATTERN.test(key))
      throw new Error('adoption key: 10 to 64 of letters, digits, _ and -');
    writeAtomic(path.join(this.dir, 'adoption-key'), key + '\n');
  }

  deleteAdoptionKey(): void {
    rmSync(path.join(this.dir, 'adoption-key'), { force: true });
  }
}
