/**
 * SQL for autodiscovery credential sets, and the SNMP targets a set yields for a sweep.
 */
import type { DB } from '../../platform/db/database.js';
import type { SecretBox } from '../../platform/security/secret-box.js';
import { maskSecret } from '../../platform/http/encrypted-field.js';
import { DEFAULT_SNMP, type SnmpConfigRow } from '../../platform/snmp/snmp-config.js';
import type { AuthProtocol, PrivProtocol, SnmpTarget } from '../../platform/snmp/snmp.client.js';

export interface CredentialRow {
  id: number;
  label: string;
  authuser: string;
  snmp_authprot: string;
  snmp_privprot: string;
  snmp_community: string | null;
  authpass: string | null;
  snmp_privpass: string | null;
  snmp_port: number;
  created_at: number;
  updated_at: number;
}

export type CredentialFields = Omit<CredentialRow, 'id' | 'created_at' | 'updated_at'>;

export function credentialRecord(row: CredentialRow) {
  return {
    id: row.id,
    label: row.label,
    authuser: row.authuser,
    snmp_authprot: row.snmp_authprot,
    snmp_privprot: row.snmp_privprot,
    snmp_community: maskSecret(row.snmp_community),
    authpass: maskSecret(row.authpass),
    snmp_privpass: maskSecret(row.snmp_privpass),
    snmp_port: row.snmp_port,
  };
}

export function listCredentials(db: DB): CredentialRow[] {
  return db.prepare('SELECT * FROM snmp_credentials ORDER BY id').all() as CredentialRow[];
}

export function findCredential(db: DB, id: number): CredentialRow | undefined {
  return db.prepare('SELECT * FROM snmp_credentials WHERE id = ?').get(id) as
    CredentialRow | undefined;
}

/** The ids among `ids` that name existing credential sets. */
export function existingCredentialIds(db: DB, ids: readonly number[]): Set<number> {
  const rows = db
    .prepare('SELECT id FROM snmp_credentials WHERE id IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify(ids)) as { id: number }[];
  return new Set(rows.map((r) => r.id));
}

export function insertCredential(db: DB, fields: CredentialFields, now: number): number {
  return Number(
    db
      .prepare(
        `INSERT INTO snmp_credentials (label, authuser, snmp_authprot, snmp_privprot, snmp_community, authpass, snmp_privpass, snmp_port, created_at, updated_at)
         VALUES (@label, @authuser, @snmp_authprot, @snmp_privprot, @snmp_community, @authpass, @snmp_privpass, @snmp_port, @now, @now)`,
      )
      .run({ ...fields, now }).lastInsertRowid,
  );
}

export function updateCredential(db: DB, id: number, fields: CredentialFields, now: number): void {
  db.prepare(
    `UPDATE snmp_credentials SET label = @label, authuser = @authuser, snmp_authprot = @snmp_authprot, snmp_privprot = @snmp_privprot,
       snmp_community = @snmp_community, authpass = @authpass, snmp_privpass = @snmp_privpass, snmp_port = @snmp_port, updated_at = @now WHERE id = @id`,
  ).run({ ...fields, now, id });
}

export function deleteCredential(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM snmp_credentials WHERE id = ?').run(id).changes > 0;
}

/** One way to reach an agent with a credential set: the target (secrets opened) and the configuration to store (secrets sealed). */
export interface CredentialAttempt {
  target: SnmpTarget;
  config: SnmpConfigRow;
}

/**
 * The SNMP attempts a credential set yields for `host`, cheapest first: v2c with its community
 * (when it has one), then SNMPv3 as its user at the highest level its secrets allow (authPriv
 * with both passphrases, authNoPriv with the auth passphrase, else noAuthNoPriv). The port is the
 * set's `snmp_port` (default 161).
 */
export function credentialAttempts(
  box: SecretBox,
  credential: CredentialRow,
  host: string,
): CredentialAttempt[] {
  const attempts: CredentialAttempt[] = [];
  const open = (sealed: string | null) => (sealed ? box.open(sealed) : null);
  const port = credential.snmp_port;
  const none = DEFAULT_SNMP;
  const community = open(credential.snmp_community);
  if (community) {
    attempts.push({
      target: { host, port, version: 2, community },
      config: {
        ...none,
        snmp_version: 2,
        snmp_port: port,
        snmp_community: credential.snmp_community,
      },
    });
  }
  if (credential.authuser) {
    const authKey = open(credential.authpass);
    const privKey = open(credential.snmp_privpass);
    const security = authKey && privKey ? 'authPriv' : authKey ? 'authNoPriv' : 'noAuthNoPriv';
    const auth = security !== 'noAuthNoPriv';
    const priv = security === 'authPriv';
    attempts.push({
      target: {
        host,
        port,
        version: 3,
        security,
        user: credential.authuser,
        authProtocol: auth ? (credential.snmp_authprot as AuthProtocol) : null,
        authKey: auth ? authKey : null,
        privProtocol: priv ? (credential.snmp_privprot as PrivProtocol) : null,
        privKey: priv ? privKey : null,
      },
      config: {
        ...none,
        snmp_version: 3,
        snmp_port: port,
        snmp_v3_security: security,
        authuser: credential.authuser,
        authpass: auth ? credential.authpass : null,
        authprot: auth ? credential.snmp_authprot : null,
        privpass: priv ? credential.snmp_privpass : null,
        privprot: priv ? credential.snmp_privprot : null,
      },
    });
  }
  return attempts;
}
