/**
 * A small client of the agent protocol for tests (docs/agent-protocol.md): an Ed25519 agent key
 * that signs HTTPS requests from its own loopback address, and a UDP socket on that address
 * that verifies the appliance's requests and answers them through POST /api/agent/results, or
 * takes part in the adoption exchange. It is a protocol peer, not a mock of the appliance.
 */
import crypto, { type KeyObject } from 'node:crypto';
import dgram from 'node:dgram';
import { Agent, request } from 'undici';
import {
  adoptionHmacKey,
  decodeDatagram,
  encodeDatagram,
  KIND,
  publicKeyOf,
  rawPublicKey,
  signHttpRequest,
} from '../../appliance-core/src/features/agents/agent-protocol.rules.js';

export interface PeerResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export class AgentPeer {
  readonly privateKey: KeyObject;
  readonly publicKey: string;
  readonly dispatcher: Agent;
  socket: dgram.Socket | null = null;
  bundle: any = null;
  adoptionKey: string | null = null;
  /** Requests verified and answered, by op. */
  readonly seen: { op: string; args: any; request_id: string }[] = [];
  /** What the peer answers per op; default: ok with {op}. */
  answer: (
    op: string,
    args: any,
  ) => { ok: true; data: unknown } | { ok: false; error: string } | null = (op) => ({
    ok: true,
    data: { op },
  });
  /** Set to false to not acknowledge a bundle push. */
  ack = true;

  constructor(
    readonly baseUrl: string,
    readonly address: string,
    readonly agentUuid: string,
    readonly hostname = `host-${address}`,
  ) {
    const pair = crypto.generateKeyPairSync('ed25519');
    this.privateKey = pair.privateKey;
    this.publicKey = rawPublicKey(pair.publicKey);
    this.dispatcher = new Agent({
      connect: { rejectUnauthorized: false },
      localAddress: address,
      keepAliveTimeout: 1000,
    });
  }

  /** Signs and posts `body` (a text or an object) to `path`; `tamper` edits the headers or body after signing. */
  async post(
    path: string,
    body: unknown,
    options: {
      headers?: Record<string, string>;
      tamper?: (h: Record<string, string>, body: string) => string;
      now?: number;
      signer?: { privateKey: KeyObject; publicKey: string };
    } = {},
  ): Promise<PeerResponse> {
    let text = typeof body === 'string' ? body : JSON.stringify(body);
    const signer = options.signer ?? this;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...signHttpRequest(
        signer.privateKey,
        signer.publicKey,
        path,
        text,
        options.now ?? Date.now(),
      ),
      ...options.headers,
    };
    if (options.tamper) text = options.tamper(headers, text);
    return this.send(path, text, headers);
  }

  async send(path: string, text: string, headers: Record<string, string>): Promise<PeerResponse> {
    const res = await request(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers,
      body: text,
      dispatcher: this.dispatcher,
    });
    const out = await res.body.text();
    let parsed: unknown = out;
    if (String(res.headers['content-type'] ?? '').includes('json') && out !== '')
      parsed = JSON.parse(out);
    return { status: res.statusCode, headers: res.headers, body: parsed, text: out };
  }

  checkin(extra: Record<string, unknown> = {}) {
    return this.post('/api/agent/checkin', {
      agent_uuid: this.agentUuid,
      hostname: this.hostname,
      agent_version: '1.0.0',
      os_version: 'Linux test',
      arch: 'amd64',
      ...extra,
    });
  }

  enroll(token: string, extra: Record<string, unknown> = {}) {
    return this.post('/api/agent/enroll', {
      token,
      agent_uuid: this.agentUuid,
      hostname: this.hostname,
      agent_version: '1.0.0',
      os_version: 'Linux test',
      ...extra,
    });
  }

  /** Listens for the appliance's datagrams on `port` of the peer's address. */
  async listen(port: number): Promise<void> {
    const socket = dgram.createSocket('udp4');
    this.socket = socket;
    socket.on('message', (msg, rinfo) => void this.onDatagram(msg, rinfo));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, this.address, () => resolve());
    });
  }

  private async onDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): Promise<void> {
    const reply = (kind: number, payload: unknown) =>
      this.socket?.send(
        encodeDatagram(kind, payload, {
          kind: 'hmac',
          key: adoptionHmacKey(this.adoptionKey as string),
        }),
        rinfo.port,
        rinfo.address,
      );
    if (this.adoptionKey) {
      const hello = decodeDatagram(msg, { hmacKey: adoptionHmacKey(this.adoptionKey) });
      if (hello?.kind === KIND.adoptHello) {
        this.lastHelloNonce = hello.payload.nonce as string;
        reply(KIND.adoptReply, {
          nonce: hello.payload.nonce,
          agent_uuid: this.agentUuid,
          hostname: this.hostname,
          agent_version: '1.0.0',
          os_version: 'Linux test',
          arch: 'amd64',
          public_key: this.publicKey,
        });
        return;
      }
      const candidate = decodeDatagram(msg, { publicKey: this.pushKey(msg) ?? undefined });
      if (candidate?.kind === KIND.bundlePush && candidate.payload.nonce === this.lastHelloNonce) {
        this.pushes++;
        if (!this.ack) return;
        this.bundle = candidate.payload.bundle;
        reply(KIND.bundleAck, { nonce: candidate.payload.nonce, agent_uuid: this.agentUuid });
        return;
      }
    }
    if (!this.bundle) return;
    const key = publicKeyOf(this.bundle.public_key);
    const decoded = decodeDatagram(msg, { publicKey: key ?? undefined });
    if (!decoded || decoded.kind !== KIND.request) return;
    const p = decoded.payload as any;
    if (p.server_id !== this.bundle.server_id || p.agent_uuid !== this.agentUuid) return;
    this.seen.push({ op: p.op, args: p.args, request_id: p.request_id });
    const answer = this.answer(p.op, p.args);
    if (!answer) return;
    await this.post('/api/agent/results', {
      agent_uuid: this.agentUuid,
      request_id: p.request_id,
      ...answer,
    });
  }

  pushes = 0;
  private lastHelloNonce: string | null = null;

  /** The public key a bundle push names (verified by its own signature, vouched by the nonce). */
  private pushKey(msg: Buffer): KeyObject | null {
    try {
      const n = msg.readUInt16BE(6);
      const payload = JSON.parse(msg.subarray(8, 8 + n).toString('utf8'));
      return publicKeyOf(payload?.bundle?.public_key ?? '');
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    const s = this.socket;
    this.socket = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    await this.dispatcher.close();
  }
}

/** A free UDP port on loopback (for the appliance's APPLIANCE_AGENT_UDP_PORT and the peers). */
export async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', () => resolve()));
  const port = s.address().port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
