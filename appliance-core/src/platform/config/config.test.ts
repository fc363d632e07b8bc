import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({}, [], '/srv');
    expect(config).toEqual({
      dataDir: '/srv/data',
      bind: '127.0.0.1',
      httpsPort: 8443,
      syslogPort: 5514,
      netflowPort: 2055,
      logLevel: 'info',
      loginTokenTtlHours: 12,
      trustedProxies: [],
      terminal: 'on',
      urlAllowPrivate: 'on',
      toolRunsPerUser: 4,
      toolRunsTotal: 16,
      tablespaces: [],
      outletAllow: [],
      captureMax: 4,
      captureDiskMax: 2147483648,
      captureEngine: 'auto',
      captureIdleSeconds: 60,
      networkMode: 'dry-run',
      rootHelperSocket: '/run/netmon-appliance/root-helper.sock',
      retentionIntervalSeconds: 3600,
      agentInstallers: '/srv/data/agent-installers',
      agentUdpPort: 489,
      agentSourceIps: [],
    });
  });

  it('takes the agent settings: installers folder (resolved; default under the data dir), UDP port, source addresses', () => {
    const config = loadConfig(
      { APPLIANCE_AGENT_SOURCE_IPS: '192.0.2.10, 2001:db8::1', APPLIANCE_AGENT_UDP_PORT: '10489' },
      ['--agent-installers', 'staged'],
      '/srv',
    );
    expect(config).toMatchObject({
      agentInstallers: '/srv/staged',
      agentUdpPort: 10489,
      agentSourceIps: ['192.0.2.10', '2001:db8::1'],
    });
    expect(() => loadConfig({ APPLIANCE_AGENT_UDP_PORT: '0' })).toThrow(/APPLIANCE_AGENT_UDP_PORT/);
  });

  it('reads environment variables and lets equal CLI flags win', () => {
    const env = {
      APPLIANCE_DATA_DIR: '/var/lib/a',
      APPLIANCE_HTTPS_PORT: '9443',
      APPLIANCE_BIND: '::1',
      APPLIANCE_ADMIN_PASSWORD: 'Secret-123',
      APPLIANCE_TRUSTED_PROXIES: '10.0.0.1, 10.0.0.2',
    };
    const config = loadConfig(
      env,
      ['--https-port', '10443', '--log-level=warn', '--syslog-port', '0'],
      '/',
    );
    expect(config).toMatchObject({
      dataDir: '/var/lib/a',
      httpsPort: 10443,
      bind: '::1',
      logLevel: 'warn',
      syslogPort: 0,
      adminPassword: 'Secret-123',
      trustedProxies: ['10.0.0.1', '10.0.0.2'],
    });
  });

  it('accepts auto for the collector ports and names it when a port is bad', () => {
    const config = loadConfig({ APPLIANCE_SYSLOG_PORT: 'auto' }, ['--netflow-port', 'auto'], '/');
    expect(config).toMatchObject({ syslogPort: 'auto', netflowPort: 'auto' });
    expect(() => loadConfig({ APPLIANCE_SYSLOG_PORT: 'any' }, [], '/')).toThrow(
      'APPLIANCE_SYSLOG_PORT: "any" is not a whole number or auto',
    );
    expect(() => loadConfig({ APPLIANCE_HTTPS_PORT: 'auto' }, [], '/')).toThrow(
      'APPLIANCE_HTTPS_PORT: "auto" is not a whole number',
    );
  });

  it('lists every bad key at once', () => {
    try {
      loadConfig({ APPLIANCE_HTTPS_PORT: 'eighty', APPLIANCE_LOG_LEVEL: 'loud' }, [
        '--bogus',
        'x',
        '--netflow-port',
        '70000',
      ]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/unknown option --bogus/);
      expect(problems).toMatch(/APPLIANCE_HTTPS_PORT: "eighty" is not a whole number/);
    }
    try {
      loadConfig({ APPLIANCE_LOG_LEVEL: 'loud' }, ['--netflow-port', '70000']);
      expect.unreachable();
    } catch (err) {
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/APPLIANCE_LOG_LEVEL/);
      expect(problems).toMatch(/APPLIANCE_NETFLOW_PORT \(--netflow-port\)/);
    }
  });

  it('refuses a flag without its value', () => {
    expect(() => loadConfig({}, ['--data-dir'])).toThrow(/--data-dir needs a value/);
  });

  it('reads APPLIANCE_PUBLIC_ORIGIN as an origin (normalised) and refuses anything else at start', () => {
    for (const [text, origin] of [
      ['https://nms.example.net:8443', 'https://nms.example.net:8443'],
      ['HTTPS://NMS.Example.NET:443/', 'https://nms.example.net'],
      ['http://10.0.0.5', 'http://10.0.0.5'],
      ['https://[2001:db8::1]:8443', 'https://[2001:db8::1]:8443'],
    ])
      expect(loadConfig({ APPLIANCE_PUBLIC_ORIGIN: text }, [], '/').publicOrigin, text).toBe(
        origin,
      );
    expect(loadConfig({}, ['--public-origin', 'https://a.example']).publicOrigin).toBe(
      'https://a.example',
    );
    expect(loadConfig({}, [], '/').publicOrigin).toBeUndefined();
    for (const bad of [
      'nms.example.net',
      'ftp://nms.example.net',
      'https://nms.example.net/console',
      'https://nms.example.net?x=1',
      'https://nms.example.net#top',
      'https://user:pw@nms.example.net',
      'https://',
      'https://nms.example.net:99999',
      'https://nms example.net',
    ]) {
      expect(() => loadConfig({ APPLIANCE_PUBLIC_ORIGIN: bad }, [], '/'), bad).toThrow(
        /APPLIANCE_PUBLIC_ORIGIN \(--public-origin\): ".*" is not an origin/,
      );
    }
  });

  it('takes the eve file from APPLIANCE_EVE_FILE or --eve-file, resolved; unset disables IDS intake', () => {
    expect(loadConfig({}, [], '/srv').eveFile).toBeUndefined();
    expect(loadConfig({ APPLIANCE_EVE_FILE: 'suricata/eve.json' }, [], '/srv').eveFile).toBe(
      '/srv/suricata/eve.json',
    );
    expect(
      loadConfig({ APPLIANCE_EVE_FILE: '/a/eve.json' }, ['--eve-file', '/b/eve.json'], '/').eveFile,
    ).toBe('/b/eve.json');
    expect(() => loadConfig({ APPLIANCE_EVE_FILE: '' }, [], '/')).toThrow(/APPLIANCE_EVE_FILE/);
  });
});

describe('APPLIANCE_OUTLET_ALLOW', () => {
  it('reads a comma-separated allowlist and names a malformed entry', () => {
    expect(
      loadConfig({ APPLIANCE_OUTLET_ALLOW: '127.0.0.1, hooks.corp.example,10.0.0.0/8' }, [], '/srv')
        .outletAllow,
    ).toEqual(['127.0.0.1', 'hooks.corp.example', '10.0.0.0/8']);
    expect(() => loadConfig({}, ['--outlet-allow', '10.0.0.0/40'], '/srv')).toThrow(
      /APPLIANCE_OUTLET_ALLOW \(--outlet-allow\): outlet allowlist entry 10\.0\.0\.0\/40 has a bad prefix length/,
    );
  });

  it('takes the network mode (apply or dry-run, flag wins) and an absolute root-helper socket', () => {
    expect(loadConfig({ APPLIANCE_NETWORK_MODE: 'apply' }, [], '/')).toMatchObject({
      networkMode: 'apply',
    });
    expect(
      loadConfig({ APPLIANCE_NETWORK_MODE: 'apply' }, ['--network-mode', 'dry-run'], '/'),
    ).toMatchObject({ networkMode: 'dry-run' });
    expect(() => loadConfig({ APPLIANCE_NETWORK_MODE: 'yes' }, [], '/')).toThrow(
      /APPLIANCE_NETWORK_MODE \(--network-mode\)/,
    );
    expect(loadConfig({}, ['--root-helper-socket', '/tmp/helper.sock'], '/').rootHelperSocket).toBe(
      '/tmp/helper.sock',
    );
    expect(() => loadConfig({ APPLIANCE_ROOT_HELPER_SOCKET: 'relative.sock' }, [], '/')).toThrow(
      /APPLIANCE_ROOT_HELPER_SOCKET/,
    );
  });
});
