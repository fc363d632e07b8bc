import dgram from 'node:dgram';

import { describe, expect, it } from 'vitest';

import {
  chooseCollectorPorts,
  collectorEnv,
  isPortFree,
  localAddresses,
} from './collector-ports.js';
import { inheritedEnv } from './embedded-appliance.js';
import { findMissingTools } from './missing-tools.js';
import { OutputRing } from './output-ring.js';

describe('OutputRing', () => {
  it('keeps the last lines of each stream, joining chunks that split lines', () => {
    const ring = new OutputRing(3);
    const out = {};
    const err = {};
    ring.append(out, 'one\ntw');
    ring.append(err, 'E1\n');
    ring.append(out, 'o\nthree\nfou');
    expect(ring.tail()).toEqual(['two', 'three', 'fou']);
    ring.mark('--- restarted ---');
    expect(ring.tail()).toEqual(['three', 'fou', '--- restarted ---']);
    expect(ring.tail(1)).toEqual(['--- restarted ---']);
  });

  it('cuts very long lines', () => {
    const ring = new OutputRing(2);
    ring.append({}, `${'x'.repeat(5_000)}\n`);
    expect(ring.tail()[0]).toHaveLength(2_001);
  });
});

describe('findMissingTools', () => {
  it('looks on PATH and in the system directories, per platform', () => {
    const present = new Set(['/opt/tools/fping', '/usr/sbin/mtr', '/usr/bin/nmap']);
    expect(findMissingTools('/opt/tools', 'linux', (file) => present.has(file))).toEqual([
      'tracepath',
      'iperf3',
      'whois',
    ]);
    const windows = new Set(['C:\\tools\\nmap.exe']);
    expect(findMissingTools('C:\\tools;C:\\Windows', 'win32', (file) => windows.has(file))).toEqual(
      ['fping', 'mtr', 'tracepath', 'iperf3', 'whois'],
    );
  });
});

describe('collector ports', () => {
  it('reuses last ports when free, never the standalone defaults, else auto', async () => {
    const free = async () => true;
    expect(await chooseCollectorPorts('127.0.0.1', {}, free)).toEqual({
      syslog: 'auto',
      netflow: 'auto',
    });
    expect(
      await chooseCollectorPorts(
        '127.0.0.1',
        { syslog: { udp: 41514, tcp: 41514 }, netflow: { udp: 42055 } },
        free,
      ),
    ).toEqual({ syslog: 41514, netflow: 42055 });
    expect(
      await chooseCollectorPorts(
        '127.0.0.1',
        { syslog: { udp: 5514, tcp: 5514 }, netflow: { udp: 2055 } },
        free,
      ),
    ).toEqual({ syslog: 'auto', netflow: 'auto' });
    const tcpTaken = async (protocol: 'udp' | 'tcp') => protocol === 'udp';
    expect(
      await chooseCollectorPorts(
        '127.0.0.1',
        { syslog: { udp: 41514, tcp: 41514 }, netflow: { udp: 42055 } },
        tcpTaken,
      ),
    ).toEqual({ syslog: 'auto', netflow: 42055 });
  });

  it('probes a real socket', async () => {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    expect(await isPortFree('udp', '127.0.0.1', port)).toBe(false);
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    expect(await isPortFree('udp', '127.0.0.1', port)).toBe(true);
  });

  it('turns settings into the appliance environment', () => {
    expect(
      collectorEnv(
        { enabled: false, bindAddress: '10.0.0.2' },
        { syslog: 'auto', netflow: 'auto' },
      ),
    ).toEqual({
      APPLIANCE_SYSLOG_PORT: '0',
      APPLIANCE_NETFLOW_PORT: '0',
    });
    expect(
      collectorEnv({ enabled: true, bindAddress: '10.0.0.2' }, { syslog: 41514, netflow: 'auto' }),
    ).toEqual({
      APPLIANCE_COLLECTOR_BIND: '10.0.0.2',
      APPLIANCE_SYSLOG_PORT: '41514',
      APPLIANCE_NETFLOW_PORT: 'auto',
    });
  });

  it('lists loopback, every interface address except link-local IPv6, and all', () => {
    expect(
      localAddresses({
        eth0: [
          {
            address: '192.168.1.20',
            family: 'IPv4',
            netmask: '',
            mac: '',
            internal: false,
            cidr: null,
          },
          {
            address: 'fe80::1',
            family: 'IPv6',
            netmask: '',
            mac: '',
            internal: false,
            cidr: null,
            scopeid: 2,
          },
        ],
      }),
    ).toEqual(['127.0.0.1', '192.168.1.20', '0.0.0.0', '::']);
  });
});

describe('inheritedEnv', () => {
  it('passes the app environment on without appliance, Electron or Node options', () => {
    expect(
      inheritedEnv({
        PATH: '/usr/bin',
        HOME: '/home/u',
        APPLIANCE_HTTPS_PORT: '8443',
        ELECTRON_RUN_AS_NODE: '1',
        NODE_OPTIONS: '--inspect',
        EMPTY: undefined,
      }),
    ).toEqual({ PATH: '/usr/bin', HOME: '/home/u' });
  });
});
