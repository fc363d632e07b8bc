/**
 * The SNMP configuration rules: protocol names, a write merged over the stored configuration,
 * and probe targets from sent or stored secrets.
 */
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../security/secret-box.js';
import {
  mergeSnmpConfig,
  normalizeAuthProtocol,
  normalizePrivProtocol,
  probeTargetOf,
} from './snmp-config.js';

describe('SNMP configuration rules', () => {
  const box = new SecretBox(Buffer.alloc(32, 3));

  it('normalizes protocol names', () => {
    expect(['sha', 'SHA1', 'sha-256', 'SHA_512', 'md5'].map(normalizeAuthProtocol)).toEqual([
      'SHA',
      'SHA',
      'SHA256',
      'SHA512',
      'MD5',
    ]);
    expect(['aes', 'AES-128', 'aes-256', 'AES256C', 'des'].map(normalizePrivProtocol)).toEqual([
      'AES',
      'AES',
      'AES256B',
      'AES256R',
      'DES',
    ]);
    expect([
      normalizeAuthProtocol('SHA3'),
      normalizePrivProtocol('3DES'),
      normalizeAuthProtocol(''),
    ]).toEqual([null, null, null]);
  });

  it('merges a write over the stored configuration: omitted fields keep, secrets seal', () => {
    const first = mergeSnmpConfig(box, null, { snmp_version: '2c', snmp_community: 'public' });
    expect('config' in first && first.config).toMatchObject({
      snmp_version: 2,
      snmp_port: 161,
      snmp_community: expect.stringMatching(/^v1:/),
    });
    const stored = (first as { config: never }).config;
    const second = mergeSnmpConfig(box, stored, { snmp_port: 1161 });
    expect('config' in second && box.open(second.config.snmp_community as string)).toBe('public');
    expect('config' in second && second.config.snmp_port).toBe(1161);
    expect(
      mergeSnmpConfig(box, stored, {
        snmp_version: 3,
        snmp_v3_security: 'noAuthNoPriv',
        authuser: 'u',
      }),
    ).toMatchObject({ config: { snmp_version: 3, authuser: 'u' } });
  });

  it('builds a probe target from sent plaintext or the stored secrets', () => {
    const stored = (
      mergeSnmpConfig(box, null, {
        snmp_version: 3,
        snmp_v3_security: 'authPriv',
        authuser: 'u',
        authprot: 'SHA',
        authpass: 'stored-auth',
        privprot: 'AES',
        privpass: 'stored-priv',
      }) as { config: never }
    ).config;
    expect(
      probeTargetOf(
        box,
        '127.0.0.1',
        {
          snmp_version: 3,
          snmp_v3_security: 'authPriv',
          authuser: 'u',
          authprot: 'SHA',
          authpass: { __encrypted__: true },
          privprot: 'AES',
          privpass: 'sent-priv',
        },
        stored,
      ),
    ).toEqual({
      target: {
        host: '127.0.0.1',
        port: 161,
        version: 3,
        community: null,
        security: 'authPriv',
        user: 'u',
        authProtocol: 'SHA',
        authKey: 'stored-auth',
        privProtocol: 'AES',
        privKey: 'sent-priv',
      },
    });
    expect(probeTargetOf(box, '127.0.0.1', { snmp_version: 2 }, null)).toEqual({
      errors: {
        'snmpconfig.snmp_community': ['The snmp community field is required for SNMP v1 and v2c.'],
      },
    });
  });
});
