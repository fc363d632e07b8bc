/**
 * The appliance's agent secrets (docs/agent-protocol.md §1): the Ed25519 appliance key and the
 * download-URL secret, created at first start and kept sealed with the platform's secret box.
 * The private key and the secret never leave this object: it signs and computes HMACs.
 */
import crypto, { type KeyObject } from 'node:crypto';
import type { DB } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import { b64u, rawPublicKey, serverIdOf } from './agent-protocol.rules.js';
import { findSecret, insertSecret } from './agents.repository.js';

export class AgentKeys {
  readonly publicKey: string;
  readonly serverId: string;
  private readonly privateKey: KeyObject;
  private readonly downloadKey: Buffer;

  constructor(db: DB, secrets: SecretBox, now: number) {
    if (!findSecret(db, 'appliance_key')) {
      const pair = crypto.generateKeyPairSync('ed25519');
      insertSecret(db, {
        name: 'appliance_key',
        sealed: secrets.seal(pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()),
        public_part: rawPublicKey(pair.publicKey),
        created_at: now,
      });
    }
    if (!findSecret(db, 'download_secret'))
      insertSecret(db, {
        name: 'download_secret',
        sealed: secrets.seal(b64u(crypto.randomBytes(32))),
        public_part: null,
        created_at: now,
      });
    const key = findSecret(db, 'appliance_key');
    const download = findSecret(db, 'download_secret');
    if (!key?.public_part || !download) throw new Error('agent secrets missing');
    this.privateKey = crypto.createPrivateKey(secrets.open(key.sealed));
    this.publicKey = key.public_part;
    this.serverId = serverIdOf(this.publicKey);
    this.downloadKey = Buffer.from(secrets.open(download.sealed), 'base64url');
  }

  /** The datagram authenticator of kinds 1 and 4. */
  signer(): { kind: 'ed25519'; privateKey: KeyObject } {
    return { kind: 'ed25519', privateKey: this.privateKey };
  }

  /** The download secret, for signing and checking download URLs. */
  downloadSecret(): Buffer {
    return this.downloadKey;
  }

  /** Keeps the key objects out of logs and JSON. */
  toJSON(): { publicKey: string; serverId: string } {
    return { publicKey: this.publicKey, serverId: this.serverId };
  }
}
