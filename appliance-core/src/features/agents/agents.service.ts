/**
 * The agents feature's logic: enrollment tokens, enroll, check-in (pending, fast-track, adopted,
 * 409 and the override retry), results, adoption by key, the key bundle with its signed update
 * URL, staged installers, and the probes through the agent channel (docs/agent-protocol.md;
 * docs/features/agents.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import { actorOf, recordAudit } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { ApiFailure } from '../../platform/http/envelopes.js';
import type { Identity } from '../../platform/http/identity.js';
import { hashToken, mintToken } from '../../platform/security/tokens.js';
import { toSqlDateTime } from '../../platform/time/time.js';
import {
  agentProfile,
  createAgentDevice,
  findDeviceAt,
  findDeviceOfAgent,
  moveAgentDevice,
  profileExists,
  recordAgentCheckin,
  type DevicesService,
} from '../devices/index.js';
import type { AgentChannel, AgentResult } from './agent-channel.engine.js';
import type { AgentKeys } from './agent-keys.service.js';
import {
  ARCHES,
  DOWNLOAD_URL_TTL_MS,
  downloadSignature,
  downloadSignatureValid,
  NonceMemory,
  publicKeyOf,
  verifyHttpSignature,
  type Arch,
} from './agent-protocol.rules.js';
import {
  activeTokens,
  consumeToken,
  findAgent,
  findToken,
  findTokenByHash,
  insertToken,
  revokeToken,
  upsertAgent,
  type TokenRow,
} from './agents.repository.js';
import type {
  AdoptBody,
  CheckinBody,
  CreateTokenBody,
  EnrollBody,
  KeyBundle,
  ResultBody,
} from './agents.schema.js';

export const INVALID_SIGNATURE = 'Invalid signature';
export const IP_HELD = 'IP address is held by another device';
export const ADOPT_FAILED = 'Agent not reachable or adoption key not accepted';
const CONFLICT_AUDIT_MS = 60 * 60_000;

/** What a request brings that the service needs: the raw body and the socket's view. */
export interface SignedRequest {
  path: string;
  rawBody: string;
  headers: FastifyRequest['headers'];
  ip: string;
  serverUrl: string;
}

export interface StagedInstaller {
  version: string;
  arch: Arch;
  sha256: string;
  signature: string;
  file: string;
}

const canonicalIp = (text: string): string | null => {
  const trimmed = text.trim();
  const bare =
    trimmed.startsWith('::ffff:') && net.isIPv4(trimmed.slice(7)) ? trimmed.slice(7) : trimmed;
  if (net.isIPv4(bare)) return bare;
  if (!net.isIPv6(bare)) return null;
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
};

export function tokenRecord(row: TokenRow) {
  return {
    id: row.id,
    label: row.label,
    tags: JSON.parse(row.tags) as string[],
    ttl_seconds: row.ttl_seconds,
    single_use: row.single_use === 1,
    expires_at: toSqlDateTime(row.expires_at),
    consumed_at: row.consumed_at === null ? null : toSqlDateTime(row.consumed_at),
    revoked_at: row.revoked_at === null ? null : toSqlDateTime(row.revoked_at),
    created_by_user_id: row.created_by_user_id,
  };
}

const header = (headers: FastifyRequest['headers'], name: string): string | undefined => {
  const v = headers[name];
  return typeof v === 'string' ? v : undefined;
};

export class AgentsService {
  private readonly nonces = new NonceMemory();
  private readonly conflictAudited = new Map<number, number>();

  constructor(
    private readonly ctx: CoreContext,
    private readonly devices: DevicesService,
    readonly keys: AgentKeys,
    readonly channel: AgentChannel,
  ) {}

  // --- enrollment tokens ----------------------------------------------------------------------

  /** Slugs a tag-restricted caller may give (the others are dropped silently). */
  private scopedSlugs(identity: Identity | null, slugs: readonly string[]): string[] {
    const unique = [...new Set(slugs.map((s) => s.trim()).filter(Boolean))];
    if (!identity || identity.tagIds === null) return unique;
    const own = new Set(identity.tagSlugs);
    return unique.filter((s) => own.has(s));
  }

  createToken(request: FastifyRequest, identity: Identity, body: CreateTokenBody) {
    const { db, clock } = this.ctx;
    const token = mintToken('nmagt');
    const now = clock.now();
    const id = insertToken(db, {
      label: body.label ?? '',
      tags: this.scopedSlugs(identity, body.tags ?? []),
      hash: hashToken(token),
      ttlSeconds: body.ttl_seconds ?? 86400,
      singleUse: body.single_use ?? true,
      userId: identity.user.id,
      now,
    });
    recordAudit(db, now, actorOf(request), {
      action: 'agent_token.create',
      outcome: 'success',
      target: { type: 'agent_token', id, label: body.label ?? null },
    });
    const row = findToken(db, id) as TokenRow;
    return { ...tokenRecord(row), token };
  }

  listTokens() {
    return activeTokens(this.ctx.db, this.ctx.clock.now()).map(tokenRecord);
  }

  getToken(id: number) {
    const row = findToken(this.ctx.db, id);
    if (!row) throw new ApiFailure(404, 'Token not found');
    return tokenRecord(row);
  }

  revoke(request: FastifyRequest, id: number) {
    const { db, clock } = this.ctx;
    const row = findToken(db, id);
    if (!row) throw new ApiFailure(404, 'Token not found');
    const now = clock.now();
    if (!revokeToken(db, id, now)) throw new ApiFailure(409, 'Token already revoked');
    recordAudit(db, now, actorOf(request), {
      action: 'agent_token.revoke',
      outcome: 'success',
      target: { type: 'agent_token', id, label: row.label },
    });
    return { revoked: true as const };
  }

  /** The row of a usable token, or the spec's 401. */
  private usableToken(token: string): TokenRow {
    const row = findTokenByHash(this.ctx.db, hashToken(token));
    if (!row) throw new ApiFailure(401, 'Invalid token');
    if (row.revoked_at !== null) throw new ApiFailure(401, 'Token revoked');
    if (row.single_use === 1 && row.consumed_at !== null)
      throw new ApiFailure(401, 'Token already consumed');
    if (row.expires_at <= this.ctx.clock.now()) throw new ApiFailure(401, 'Token expired');
    return row;
  }

  // --- signatures (§3) ------------------------------------------------------------------------

  /** Steps 1 to 4; returns the agent's key or throws 401 Invalid signature. */
  verify(request: SignedRequest): string {
    const now = this.ctx.clock.now();
    const h = request.headers;
    const key = verifyHttpSignature(
      {
        key: header(h, 'x-agent-key'),
        timestamp: header(h, 'x-agent-timestamp'),
        nonce: header(h, 'x-agent-nonce'),
        signature: header(h, 'x-agent-signature'),
      },
      request.path,
      request.rawBody,
      now,
    );
    if (!key || !this.nonces.remember(header(h, 'x-agent-nonce') as string, now))
      throw new ApiFailure(401, INVALID_SIGNATURE);
    return key;
  }

  // --- the key bundle -------------------------------------------------------------------------

  allowedSourceIps(): string[] {
    const configured = this.ctx.config.agentSourceIps ?? [];
    if (configured.length > 0) return configured;
    const bind = this.ctx.config.bind;
    if (bind !== '0.0.0.0' && bind !== '::') return [bind];
    const ips: string[] = [];
    for (const list of Object.values(os.networkInterfaces()))
      for (const a of list ?? [])
        if (!a.address.startsWith('fe80:') && !a.address.startsWith('169.254.'))
          ips.push(a.address);
    return ips;
  }

  staged(arch: Arch): StagedInstaller | null {
    const dir = path.join(this.ctx.config.agentInstallers ?? '', arch);
    try {
      const meta = JSON.parse(fs.readFileSync(path.join(dir, 'agent.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const file = path.join(dir, 'agent.tar.gz');
      if (!fs.statSync(file).isFile()) return null;
      const { version, sha256, signature } = meta;
      if (
        typeof version !== 'string' ||
        typeof sha256 !== 'string' ||
        !/^[0-9a-f]{64}$/.test(sha256) ||
        typeof signature !== 'string' ||
        (meta.arch !== undefined && meta.arch !== arch)
      )
        return null;
      return { version, arch, sha256, signature, file };
    } catch {
      return null;
    }
  }

  bundle(deviceId: number, serverUrl: string, arch: Arch | null): KeyBundle {
    const bundle: KeyBundle = {
      server_id: this.keys.serverId,
      server_url: serverUrl,
      public_key: this.keys.publicKey,
      allowed_source_ips: this.allowedSourceIps(),
      device_id: deviceId,
    };
    const staged = arch ? this.staged(arch) : null;
    if (staged) {
      const expires = this.ctx.clock.now() + DOWNLOAD_URL_TTL_MS;
      const sig = downloadSignature(this.keys.downloadSecret(), arch as Arch, expires);
      bundle.update = {
        version: staged.version,
        url: `${serverUrl}/api/agent/download?arch=${arch}&expires=${expires}&sig=${sig}`,
        sha256: staged.sha256,
        signature: staged.signature,
      };
    }
    return bundle;
  }

  downloadSignatureValid(query: Record<string, unknown>): boolean {
    const arch = typeof query.arch === 'string' ? query.arch : 'amd64';
    return downloadSignatureValid(
      this.keys.downloadSecret(),
      arch,
      typeof query.expires === 'string' ? query.expires : undefined,
      typeof query.sig === 'string' ? query.sig : undefined,
      this.ctx.clock.now(),
    );
  }

  // --- enroll ---------------------------------------------------------------------------------

  enroll(request: SignedRequest, body: EnrollBody): KeyBundle {
    const key = this.verify(request);
    const { db, clock } = this.ctx;
    const ip = canonicalIp(request.ip) ?? request.ip;
    const token = this.usableToken(body.token);
    const now = clock.now();
    const deviceId = db.transaction(() => {
      if (token.single_use === 1 && !consumeToken(db, token.id, now))
        throw new ApiFailure(401, 'Token already consumed');
      const id = this.placeDevice(body, ip, JSON.parse(token.tags) as string[], now);
      upsertAgent(db, this.facts(body, key, ip, true, now), true);
      return id;
    })();
    recordAudit(
      db,
      now,
      { userId: null, name: 'agent', tokenId: null, sourceIp: ip },
      {
        action: 'agent.enroll',
        outcome: 'success',
        target: { type: 'device', id: deviceId, label: body.hostname },
        detail: { agent_uuid: body.agent_uuid, enrollment_token_id: token.id },
      },
    );
    return this.bundle(deviceId, request.serverUrl, null);
  }

  private facts(
    body: {
      agent_uuid: string;
      hostname: string;
      agent_version?: string;
      os_version?: string;
      arch?: Arch;
    },
    key: string,
    ip: string | null,
    enrolled: boolean,
    now: number,
  ) {
    return {
      agentUuid: body.agent_uuid,
      publicKey: key,
      hostname: body.hostname,
      agentVersion: body.agent_version ?? null,
      osVersion: body.os_version ?? null,
      arch: body.arch ?? ('amd64' as const),
      ip,
      enrolled,
      now,
    };
  }

  /**
   * The device of an enrolling agent at `ip`: its own device moves there, or one is created (with
   * the token's tags); 409 when another device holds the address.
   */
  private placeDevice(
    body: { agent_uuid: string; hostname: string; os_version?: string },
    ip: string,
    tags: readonly string[],
    now: number,
  ): number {
    const { db } = this.ctx;
    const own = findDeviceOfAgent(db, body.agent_uuid);
    const holder = findDeviceAt(db, ip);
    if (holder && holder.id !== own?.id) throw new ApiFailure(409, IP_HELD);
    if (own) {
      if (own.ip_address !== ip) moveAgentDevice(db, own.id, ip, now);
      return own.id;
    }
    const id = createAgentDevice(db, {
      agentUuid: body.agent_uuid,
      ip,
      label: body.hostname,
      profile: agentProfile(body.os_version ?? null),
      tagSlugs: tags,
      now,
    });
    if (id === null) throw new ApiFailure(409, IP_HELD);
    return id;
  }

  // --- check-in -------------------------------------------------------------------------------

  checkin(
    request: SignedRequest,
    body: CheckinBody,
  ): { status: 200; bundle: KeyBundle } | { status: 202; message: string } {
    const key = this.verify(request);
    const { db, clock } = this.ctx;
    const ip = canonicalIp(request.ip) ?? request.ip;
    const now = clock.now();
    const known = findAgent(db, body.agent_uuid);
    const device = findDeviceOfAgent(db, body.agent_uuid);
    const arch = body.arch ?? 'amd64';
    // Step 5: a known agent's key is the credential; only a token re-keys an agent with no device.
    const token = !device && body.token !== undefined ? this.usableToken(body.token) : null;
    if (known && known.public_key !== key && !token) throw new ApiFailure(401, INVALID_SIGNATURE);

    if (device) {
      const holder = findDeviceAt(db, ip);
      if (holder && holder.id !== device.id) {
        if (!body.override) throw new ApiFailure(409, IP_HELD);
        this.auditConflict(device.id, body.agent_uuid, ip, now);
      } else if (device.ip_address !== ip) {
        moveAgentDevice(db, device.id, ip, now);
      }
      upsertAgent(db, this.facts(body, key, ip, true, now), false);
      return { status: 200, bundle: this.bundle(device.id, request.serverUrl, arch) };
    }

    if (token) {
      const deviceId = db.transaction(() => {
        if (token.single_use === 1 && !consumeToken(db, token.id, now))
          throw new ApiFailure(401, 'Token already consumed');
        const id = this.placeDevice(body, ip, JSON.parse(token.tags) as string[], now);
        upsertAgent(db, this.facts(body, key, ip, true, now), true);
        return id;
      })();
      recordAudit(
        db,
        now,
        { userId: null, name: 'agent', tokenId: null, sourceIp: ip },
        {
          action: 'agent.enroll',
          outcome: 'success',
          target: { type: 'device', id: deviceId, label: body.hostname },
          detail: { agent_uuid: body.agent_uuid, enrollment_token_id: token.id, via: 'checkin' },
        },
      );
      return { status: 200, bundle: this.bundle(deviceId, request.serverUrl, arch) };
    }

    const holder = findDeviceAt(db, ip);
    if (holder && !body.override) throw new ApiFailure(409, IP_HELD);
    const pending = db.transaction(() => {
      const id = recordAgentCheckin(db, {
        agentUuid: body.agent_uuid,
        ip,
        hostname: body.hostname,
        agentVersion: body.agent_version ?? null,
        osVersion: body.os_version ?? null,
        now,
      });
      if (id !== null) upsertAgent(db, this.facts(body, key, ip, false, now), false);
      return id;
    })();
    if (pending === null) throw new ApiFailure(409, IP_HELD);
    return {
      status: 202,
      message: 'Check-in recorded: the agent is pending until an operator imports it',
    };
  }

  private auditConflict(deviceId: number, agentUuid: string, ip: string, now: number): void {
    const last = this.conflictAudited.get(deviceId);
    if (last !== undefined && last + CONFLICT_AUDIT_MS > now) return;
    if (this.conflictAudited.size > 10_000) this.conflictAudited.clear();
    this.conflictAudited.set(deviceId, now);
    recordAudit(
      this.ctx.db,
      now,
      { userId: null, name: 'agent', tokenId: null, sourceIp: ip },
      {
        action: 'agent.ip_conflict',
        outcome: 'failure',
        target: { type: 'device', id: deviceId },
        detail: { agent_uuid: agentUuid, source_ip: ip },
      },
    );
  }

  // --- results (§5) ---------------------------------------------------------------------------

  result(request: SignedRequest, body: ResultBody): void {
    const key = this.verify(request);
    const known = findAgent(this.ctx.db, body.agent_uuid);
    if (!known || known.public_key !== key) throw new ApiFailure(401, INVALID_SIGNATURE);
    const result: AgentResult = body.ok
      ? { ok: true, data: body.data ?? null }
      : { ok: false, error: (body.error ?? 'The agent reported a failure').slice(0, 1000) };
    if (!this.channel.acceptResult(body.agent_uuid, key, body.request_id, result))
      throw new ApiFailure(404, 'Unknown request');
  }

  // --- adoption (§6) --------------------------------------------------------------------------

  async adopt(
    request: FastifyRequest,
    identity: Identity,
    body: AdoptBody,
    serverUrl: string,
  ): Promise<{ device_id: number; agent_uuid: string; enrolled: boolean }> {
    const { db, clock } = this.ctx;
    const ip = canonicalIp(body.ip_address);
    if (!ip)
      throw new ApiFailure(400, 'The ip address must be a valid IP address.', {
        fields: { ip_address: ['The ip address must be a valid IP address.'] },
        family: 'errors',
      });
    const profile = body.profile ?? 'dash_windows_wmi';
    if (!profileExists(db, profile))
      throw new ApiFailure(400, 'The selected profile is invalid.', {
        fields: { profile: ['The selected profile is invalid.'] },
        family: 'errors',
      });
    const hello = await this.channel.adoptHello(ip, body.token);
    const reply = hello?.reply;
    if (
      !hello ||
      !reply ||
      !new RegExp('^[A-Za-z0-9_:-]{8,64}$').test(reply.agent_uuid) ||
      !publicKeyOf(reply.public_key)
    ) {
      this.auditAdopt(request, ip, 'failure', null);
      throw new ApiFailure(404, ADOPT_FAILED);
    }
    const now = clock.now();
    const hostname = /^[\x20-\x3B\x3D\x3F-\x7E]{1,255}$/.test(reply.hostname)
      ? reply.hostname
      : null;
    const arch: Arch = (ARCHES as readonly string[]).includes(reply.arch)
      ? (reply.arch as Arch)
      : 'amd64';
    const deviceId = db.transaction(() => {
      const own = findDeviceOfAgent(db, reply.agent_uuid);
      const holder = findDeviceAt(db, ip);
      if (
        holder &&
        holder.id !== own?.id &&
        holder.agent_uuid !== null &&
        holder.agent_uuid !== reply.agent_uuid
      )
        throw new ApiFailure(409, IP_HELD);
      let id: number | null;
      if (own && (!holder || holder.id === own.id)) {
        if (own.ip_address !== ip) moveAgentDevice(db, own.id, ip, now);
        id = own.id;
      } else {
        id = createAgentDevice(db, {
          agentUuid: reply.agent_uuid,
          ip,
          label: body.label ?? hostname ?? ip,
          profile,
          tagSlugs: this.scopedSlugs(identity, body.tags ?? []),
          now,
        });
      }
      if (id === null) throw new ApiFailure(409, IP_HELD);
      upsertAgent(
        db,
        {
          agentUuid: reply.agent_uuid,
          publicKey: reply.public_key,
          hostname,
          agentVersion: reply.agent_version.slice(0, 64) || null,
          osVersion: reply.os_version.slice(0, 128) || null,
          arch,
          ip,
          enrolled: true,
          now,
        },
        true,
      );
      return id;
    })();
    let bundle: KeyBundle = this.bundle(deviceId, serverUrl, arch);
    let enrolled: boolean;
    try {
      enrolled = await this.channel.pushBundle(ip, body.token, hello.nonce, bundle);
    } catch {
      // Too large for one datagram (many source addresses): push without the update offer.
      bundle = this.bundle(deviceId, serverUrl, null);
      enrolled = await this.channel.pushBundle(ip, body.token, hello.nonce, bundle);
    }
    this.auditAdopt(request, ip, 'success', deviceId, reply.agent_uuid, enrolled);
    return { device_id: deviceId, agent_uuid: reply.agent_uuid, enrolled };
  }

  private auditAdopt(
    request: FastifyRequest,
    ip: string,
    outcome: 'success' | 'failure',
    deviceId: number | null,
    agentUuid?: string,
    enrolled?: boolean,
  ): void {
    recordAudit(this.ctx.db, this.ctx.clock.now(), actorOf(request), {
      action: 'agent.adopt',
      outcome,
      target: { type: 'device', id: deviceId, label: ip },
      detail: {
        ip_address: ip,
        ...(agentUuid ? { agent_uuid: agentUuid } : {}),
        ...(enrolled === undefined ? {} : { enrolled }),
      },
    });
  }

  // --- probes ---------------------------------------------------------------------------------

  /** The agent of a device the caller may see; 404 `notFound` for missing and out of scope. */
  target(identity: Identity, deviceId: number, notFound: string) {
    const device = this.devices.visibleDevice(identity, deviceId);
    if (!device) throw new ApiFailure(404, notFound);
    const agent = device.agent_uuid ? findAgent(this.ctx.db, device.agent_uuid) : undefined;
    return {
      device,
      agent: agent
        ? { ip: device.ip_address, agentUuid: agent.agent_uuid, publicKey: agent.public_key }
        : null,
    };
  }

  deviceByIp(ipText: string): number | null {
    const ip = canonicalIp(ipText);
    const held = ip ? findDeviceAt(this.ctx.db, ip) : undefined;
    return held ? held.id : null;
  }

  /** Runs an operation on a device's agent; the failure text on failure. */
  async probe(
    identity: Identity,
    deviceId: number,
    op: string,
    args: Record<string, unknown>,
    notFound: string,
  ): Promise<AgentResult> {
    const { agent } = this.target(identity, deviceId, notFound);
    if (!agent) return { ok: false, error: 'The device has no enrolled agent' };
    return this.channel.request(agent, op, args);
  }

  auditDeletion(
    request: FastifyRequest,
    deviceId: number,
    kind: 'file' | 'folder',
    target: string,
    outcome: 'success' | 'failure',
  ): void {
    recordAudit(this.ctx.db, this.ctx.clock.now(), actorOf(request), {
      action: `agent.delete_${kind}`,
      outcome,
      target: { type: 'device', id: deviceId },
      detail: { path: target.slice(0, 200) },
    });
  }
}
