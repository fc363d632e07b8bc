/**
 * Stored SNMP settings (the columns a device's `snmpconfig`, a pending device and a discovery hit
 * share): validating what clients send, sealing its secrets, masking them on read, and turning a
 * stored configuration into an SNMP target. Used by devices, pending devices, autodiscovery
 * credentials, discovery and the pollers; the tables that hold these columns belong to the
 * features, this module only maps them.
 *
 * Secrets follow the encrypted-field convention: the sentinel, an empty value or an omitted
 * field keeps the stored secret; new plaintext replaces it. A configuration's secrets are opened
 * in memory only, for the session that needs them.
 */
import type { FieldErrors } from '../http/envelopes.js';
import {
  isSentinel,
  maskSecret,
  nextSealedSecret,
  resolveSecret,
} from '../http/encrypted-field.js';
import type { SecretBox } from '../security/secret-box.js';
import {
  AUTH_PROTOCOLS,
  PRIV_PROTOCOLS,
  V3_SECURITY_LEVELS,
  type AuthProtocol,
  type PrivProtocol,
  type SnmpTarget,
  type V3Security,
} from './snmp.client.js';

/** The stored SNMP settings; secret columns hold sealed values. */
export interface SnmpConfigRow {
  snmp_version: 1 | 2 | 3;
  snmp_port: number;
  snmp_community: string | null;
  snmp_v3_security: V3Security | null;
  authuser: string | null;
  authpass: string | null;
  authprot: string | null;
  privpass: string | null;
  privprot: string | null;
}

/** A secret as clients send it: new plaintext, the sentinel or an empty value (keep), or null (keep). */
export type SecretInput = string | { __encrypted__: true } | null;

/** An `snmpconfig` as clients send it (every field optional: omitted fields keep their value). */
export interface SnmpConfigInput {
  snmp_version?: 1 | 2 | 3 | '1' | '2' | '2c' | '3' | undefined;
  snmp_port?: number | undefined;
  snmp_community?: SecretInput | undefined;
  snmp_v3_security?: V3Security | null | undefined;
  authuser?: string | null | undefined;
  authpass?: SecretInput | undefined;
  authprot?: string | null | undefined;
  privpass?: SecretInput | undefined;
  privprot?: string | null | undefined;
}

/** An `snmpconfig` as it is answered: secrets masked with the sentinel (or null when none is stored). */
export interface MaskedSnmpConfig {
  snmp_version: number;
  snmp_port: number;
  snmp_community: { __encrypted__: true } | null;
  snmp_v3_security: string | null;
  authuser: string | null;
  authpass: { __encrypted__: true } | null;
  authprot: string | null;
  privpass: { __encrypted__: true } | null;
  privprot: string | null;
}

export const DEFAULT_SNMP: SnmpConfigRow = {
  snmp_version: 2,
  snmp_port: 161,
  snmp_community: null,
  snmp_v3_security: null,
  authuser: null,
  authpass: null,
  authprot: null,
  privpass: null,
  privprot: null,
};

/** RFC 3414 passphrases are at least 8 characters (agents refuse shorter ones). */
export const MIN_V3_PASSPHRASE = 8;

export function normalizeVersion(value: unknown): 1 | 2 | 3 | null {
  if (value === 1 || value === '1') return 1;
  if (value === 2 || value === '2' || value === '2c') return 2;
  if (value === 3 || value === '3') return 3;
  return null;
}

/** `sha-256`, `SHA256` and `sha_256` are the same protocol; `SHA1` is `SHA`. */
export function normalizeAuthProtocol(value: string | null | undefined): AuthProtocol | null {
  if (value === null || value === undefined || value === '') return null;
  const key = value.toUpperCase().replace(/[-_ ]/g, '');
  const canonical = key === 'SHA1' ? 'SHA' : key;
  return (AUTH_PROTOCOLS as readonly string[]).includes(canonical)
    ? (canonical as AuthProtocol)
    : null;
}

/** `AES`/`AES128` is 128-bit AES; `AES256` is Net-SNMP's (Blumenthal) 256-bit AES; `AES256C`/`AES256R` is the Cisco (Reeder) variant. */
export function normalizePrivProtocol(value: string | null | undefined): PrivProtocol | null {
  if (value === null || value === undefined || value === '') return null;
  const key = value.toUpperCase().replace(/[-_ ]/g, '');
  const aliases: Record<string, PrivProtocol> = {
    AES128: 'AES',
    AES256: 'AES256B',
    AES256C: 'AES256R',
    CBCDES: 'DES',
  };
  const canonical = aliases[key] ?? key;
  return (PRIV_PROTOCOLS as readonly string[]).includes(canonical)
    ? (canonical as PrivProtocol)
    : null;
}

export function maskSnmpConfig(stored: SnmpConfigRow | null | undefined): MaskedSnmpConfig {
  const config = stored ?? DEFAULT_SNMP;
  return {
    snmp_version: config.snmp_version,
    snmp_port: config.snmp_port,
    snmp_community: maskSecret(config.snmp_community),
    snmp_v3_security: config.snmp_v3_security,
    authuser: config.authuser,
    authpass: maskSecret(config.authpass),
    authprot: config.authprot,
    privpass: maskSecret(config.privpass),
    privprot: config.privprot,
  };
}

const isNewPlaintext = (value: unknown): value is string =>
  typeof value === 'string' && value !== '';

/**
 * The configuration to store after a write of `input` over `stored` (omitted fields keep their
 * stored value), or the field errors that refuse it. Errors are keyed `<prefix>.<field>`.
 */
export function mergeSnmpConfig(
  box: SecretBox,
  stored: SnmpConfigRow | null | undefined,
  input: SnmpConfigInput,
  options: { prefix?: string; requireSecrets?: boolean } = {},
): { config: SnmpConfigRow } | { errors: FieldErrors } {
  const prefix = options.prefix ?? 'snmpconfig';
  const requireSecrets = options.requireSecrets ?? true;
  const base = stored ?? DEFAULT_SNMP;
  const errors: FieldErrors = {};
  const fail = (field: string, message: string) =>
    (errors[`${prefix}.${field}`] ??= []).push(message);

  const version =
    input.snmp_version === undefined ? base.snmp_version : normalizeVersion(input.snmp_version);
  if (version === null) fail('snmp_version', 'The snmp version must be 1, 2 or 3.');
  const config: SnmpConfigRow = {
    snmp_version: version ?? 2,
    snmp_port: input.snmp_port ?? base.snmp_port,
    snmp_community: nextSealedSecret(box, base.snmp_community, input.snmp_community),
    snmp_v3_security:
      input.snmp_v3_security === undefined ? base.snmp_v3_security : input.snmp_v3_security,
    authuser:
      input.authuser === undefined ? base.authuser : input.authuser === '' ? null : input.authuser,
    authpass: nextSealedSecret(box, base.authpass, input.authpass),
    authprot: base.authprot,
    privpass: nextSealedSecret(box, base.privpass, input.privpass),
    privprot: base.privprot,
  };
  if (input.authprot !== undefined) {
    config.authprot = normalizeAuthProtocol(input.authprot);
    if (input.authprot && !config.authprot)
      fail('authprot', `The authprot must be one of ${AUTH_PROTOCOLS.join(', ')}.`);
  }
  if (input.privprot !== undefined) {
    config.privprot = normalizePrivProtocol(input.privprot);
    if (input.privprot && !config.privprot)
      fail('privprot', `The privprot must be one of ${PRIV_PROTOCOLS.join(', ')}.`);
  }
  for (const [field, value] of [
    ['authpass', input.authpass],
    ['privpass', input.privpass],
  ] as const) {
    if (isNewPlaintext(value) && value.length < MIN_V3_PASSPHRASE)
      fail(field, `The ${field} must be at least ${MIN_V3_PASSPHRASE} characters.`);
  }

  if (config.snmp_version === 3) {
    const level = config.snmp_v3_security;
    if (!level)
      fail(
        'snmp_v3_security',
        `The snmp v3 security field is required for SNMPv3 (${V3_SECURITY_LEVELS.join(', ')}).`,
      );
    if (!config.authuser) fail('authuser', 'The authuser field is required for SNMPv3.');
    if (level === 'authNoPriv' || level === 'authPriv') {
      if (!config.authprot && !errors[`${prefix}.authprot`])
        fail('authprot', 'The authprot field is required for SNMPv3 authentication.');
      if (requireSecrets && !config.authpass)
        fail('authpass', 'The authpass field is required for SNMPv3 authentication.');
    }
    if (level === 'authPriv') {
      if (!config.privprot && !errors[`${prefix}.privprot`])
        fail('privprot', 'The privprot field is required for SNMPv3 privacy.');
      if (requireSecrets && !config.privpass)
        fail('privpass', 'The privpass field is required for SNMPv3 privacy.');
    }
  } else if (requireSecrets && !config.snmp_community) {
    fail('snmp_community', 'The snmp community field is required for SNMP v1 and v2c.');
  }
  return Object.keys(errors).length > 0 ? { errors } : { config };
}

/** The SNMP target of a stored configuration (secrets opened in memory only). */
export function snmpTargetOf(box: SecretBox, host: string, config: SnmpConfigRow): SnmpTarget {
  const open = (sealed: string | null) => (sealed ? box.open(sealed) : null);
  return {
    host,
    port: config.snmp_port,
    version: config.snmp_version,
    community: open(config.snmp_community),
    security: config.snmp_v3_security,
    user: config.authuser,
    authProtocol: config.authprot as AuthProtocol | null,
    authKey: open(config.authpass),
    privProtocol: config.privprot as PrivProtocol | null,
    privKey: open(config.privpass),
  };
}

/**
 * The target of a probe (testSnmp): plaintext secrets are used as sent; masked, blank or omitted
 * ones come from `stored` (the device named by device_id). Nothing is sealed or saved.
 */
export function probeTargetOf(
  box: SecretBox,
  host: string,
  input: SnmpConfigInput,
  stored: SnmpConfigRow | null | undefined,
): { target: SnmpTarget } | { errors: FieldErrors } {
  const merged = mergeSnmpConfig(
    box,
    stored,
    { ...input, snmp_community: undefined, authpass: undefined, privpass: undefined },
    { requireSecrets: false },
  );
  const errors: FieldErrors = 'errors' in merged ? { ...merged.errors } : {};
  // Sent plaintext passphrases obey the rule stored ones do (RFC 3414: at least 8 characters).
  for (const field of ['authpass', 'privpass'] as const) {
    const value = input[field];
    if (isNewPlaintext(value) && value.length < MIN_V3_PASSPHRASE)
      errors[`snmpconfig.${field}`] = [
        `The ${field} must be at least ${MIN_V3_PASSPHRASE} characters.`,
      ];
  }
  const secret = (incoming: unknown, sealed: string | null | undefined) =>
    resolveSecret(box, sealed ?? null, isSentinel(incoming) ? undefined : incoming);
  const community = secret(input.snmp_community, stored?.snmp_community);
  const authKey = secret(input.authpass, stored?.authpass);
  const privKey = secret(input.privpass, stored?.privpass);
  if (!('config' in merged)) return { errors };
  const config = merged.config;
  const level = config.snmp_v3_security;
  if (config.snmp_version !== 3 && !community)
    errors['snmpconfig.snmp_community'] = [
      'The snmp community field is required for SNMP v1 and v2c.',
    ];
  if (config.snmp_version === 3 && (level === 'authNoPriv' || level === 'authPriv') && !authKey)
    errors['snmpconfig.authpass'] = ['The authpass field is required for SNMPv3 authentication.'];
  if (config.snmp_version === 3 && level === 'authPriv' && !privKey)
    errors['snmpconfig.privpass'] = ['The privpass field is required for SNMPv3 privacy.'];
  if (Object.keys(errors).length > 0) return { errors };
  return {
    target: {
      host,
      port: config.snmp_port,
      version: config.snmp_version,
      community,
      security: config.snmp_v3_security,
      user: config.authuser,
      authProtocol: config.authprot as AuthProtocol | null,
      authKey,
      privProtocol: config.privprot as PrivProtocol | null,
      privKey,
    },
  };
}
