import { describe, expect, it } from 'vitest';
import type { NetworkInterface, RetentionRow } from './settings-api.js';
import {
  daemonConfigBody,
  daemonForm,
  interfaceElement,
  interfaceForm,
  isIso8601,
  isSecretVar,
  lastPage,
  normaliseLicenseKey,
  ntpServers,
  retentionChanges,
  retentionError,
} from './settings-model.js';

const DELIVERY_VARS = [
  { var: 'proxy_url', secret: false, description: 'HTTP proxy for webhook outlets' },
  { var: 'proxy_password', secret: true, description: 'Password of the HTTP proxy' },
];

const eth0: NetworkInterface = {
  name: 'eth0',
  ipv4: [{ address: '192.0.2.10', netmask: '255.255.255.0' }],
  ipv6: [],
  online: true,
  config: {
    'allow-hotplug': true,
    auto: true,
    type: 'static',
    address: '192.0.2.10',
    netmask: '255.255.255.0',
    gateway: '192.0.2.1',
    'dns-nameservers': ['192.0.2.53'],
    use_sniffer: false,
    use_suricata: true,
  },
};

describe('settings model', () => {
  it('accepts only six dash-separated groups of six hex digits as a license key', () => {
    expect(normaliseLicenseKey(' 1a2b3c-4d5e6f-000000-ffffff-abcdef-123456 ')).toBe(
      '1A2B3C-4D5E6F-000000-FFFFFF-ABCDEF-123456',
    );
    expect(normaliseLicenseKey('1A2B3C-4D5E6F-000000-FFFFFF-ABCDEF')).toBeNull();
    expect(normaliseLicenseKey('1A2B3C-4D5E6F-000000-FFFFFF-ABCDEF-12345G')).toBeNull();
    expect(normaliseLicenseKey('1A2B3C4D5E6F000000FFFFFFABCDEF123456')).toBeNull();
    expect(normaliseLicenseKey('1A2B3C-4D5E6F-000000-FFFFFF-ABCDEF-1234567')).toBeNull();
  });

  it('checks ISO 8601 times and normalises NTP server lists', () => {
    expect(isIso8601('2026-12-04T22:40:00Z')).toBe(true);
    expect(isIso8601('2026-12-04T22:40')).toBe(true);
    expect(isIso8601('2026-12-04 22:40:00+01:00')).toBe(true);
    expect(isIso8601('2026-13-04T22:40:00Z')).toBe(false);
    expect(isIso8601('04/12/2026 22:40')).toBe(false);
    expect(isIso8601('now')).toBe(false);
    expect(isIso8601('2026-02-30T10:00:00Z')).toBe(false);
    expect(isIso8601('2028-02-29t10:00:00z')).toBe(true);
    expect(isIso8601('2026-12-04T24:00:00Z')).toBe(false);
    expect(isIso8601('2026-12-04T22:40+05')).toBe(true);
    expect(isIso8601('2026-12-04')).toBe(false);
    expect(ntpServers('  0.pool.ntp.org,  192.0.2.1\n time.example ')).toBe(
      '0.pool.ntp.org 192.0.2.1 time.example',
    );
  });

  it('sends address, netmask and gateway only for a static interface', () => {
    const form = interfaceForm(eth0);
    expect(interfaceElement('eth0', form)).toEqual({
      name: 'eth0',
      config: {
        type: 'static',
        address: '192.0.2.10',
        netmask: '255.255.255.0',
        gateway: '192.0.2.1',
        'dns-nameservers': ['192.0.2.53'],
        auto: true,
        'allow-hotplug': true,
        use_sniffer: false,
        use_suricata: true,
      },
    });
    const dhcp = interfaceElement('eth0', { ...form, type: 'dhcp' }).config;
    expect(dhcp.type).toBe('dhcp');
    expect(Object.keys(dhcp)).not.toContain('address');
    expect(Object.keys(dhcp)).not.toContain('netmask');
    expect(Object.keys(dhcp)).not.toContain('gateway');
    const bare = interfaceElement('eth0', { ...form, netmask: ' ', gateway: '' }).config;
    expect(bare).toMatchObject({ address: '192.0.2.10' });
    expect(Object.keys(bare)).not.toContain('gateway');
  });

  it('saves only changed retention rows, and nothing while one is invalid', () => {
    const rows: RetentionRow[] = [
      { id: 1, table: 'syslog_log', retention: 84, size: 4096 },
      { id: 2, table: 'audit_log', retention: 365, size: 1024 },
    ];
    expect(retentionChanges(rows, { 1: '30', 2: '365' })).toEqual([{ id: 1, retention: 30 }]);
    expect(retentionChanges(rows, { 1: '30', 2: '0' })).toBeNull();
    expect(retentionChanges(rows, { 1: '1.5' })).toBeNull();
    expect(retentionChanges(rows, {})).toEqual([]);
    expect(retentionError('0')).toBe('At least 1 day');
    expect(retentionError('-3')).toBe('A whole number of days');
    expect(retentionError('36501')).toBe('At most 36,500 days');
    expect(retentionError(' 1 ')).toBeNull();
  });

  it('keeps an untouched secret with the sentinel and replaces the whole config', () => {
    const form = daemonForm({
      id: 5,
      name: 'alert-delivery',
      start_auto: true,
      config: [
        { var: 'proxy_url', value: 'http://127.0.0.1:3128' },
        { var: 'proxy_password', value: { __encrypted__: true } },
      ],
      vars: DELIVERY_VARS,
    });
    expect(form[1]).toEqual({
      var: 'proxy_password',
      value: '',
      storedSecret: true,
      replace: false,
    });
    expect(daemonConfigBody(form)).toEqual([
      { var: 'proxy_url', value: 'http://127.0.0.1:3128' },
      { var: 'proxy_password', value: { __encrypted__: true } },
    ]);
    // Replaced: the new text goes; removed: the row is absent (the appliance removes it).
    expect(daemonConfigBody([{ ...form[1]!, replace: true, value: 'new-secret' }])).toEqual([
      { var: 'proxy_password', value: 'new-secret' },
    ]);
    expect(isSecretVar(DELIVERY_VARS, form[1]!)).toBe(true);
    // Named secret by the catalogue though nothing is stored yet: typed as a secret.
    const typed = { var: 'proxy_password', value: '', storedSecret: false, replace: false };
    expect(isSecretVar(DELIVERY_VARS, typed)).toBe(true);
    expect(isSecretVar([], typed)).toBe(false);
    expect(isSecretVar(DELIVERY_VARS, form[0]!)).toBe(false);
  });

  it('counts host map pages', () => {
    expect(lastPage(0, 25)).toBe(1);
    expect(lastPage(25, 25)).toBe(1);
    expect(lastPage(26, 25)).toBe(2);
  });
});
