/**
 * The host readers: ifupdown stanzas, `ip -j addr` output, the zone database, the current zone,
 * NTP servers and systemd detection, on files the test writes (and the real zone database).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_HOST_PATHS,
  detectSystemdUnit,
  parseIfupdown,
  parseIpAddrJson,
  readCurrentZone,
  readNtpServers,
  readZones,
  type HostPaths,
} from './host-system.service.js';

let dir: string;
let paths: HostPaths;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'host-system-'));
  const at = (name: string) => path.join(dir, name);
  paths = {
    networkInterfaces: at('interfaces'),
    zoneinfo: at('zoneinfo'),
    timezoneFile: at('timezone'),
    localtime: at('localtime'),
    timesyncdConf: at('timesyncd.conf'),
    chronyConf: at('chrony.conf'),
    systemdRun: at('systemd-run'),
    cgroup: at('cgroup'),
  };
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('ifupdown', () => {
  it('reads static, dhcp and manual stanzas with their options', () => {
    const stanzas = parseIfupdown(
      [
        '# comment',
        'source /etc/network/interfaces.d/*',
        'auto lo eth0',
        'iface lo inet loopback',
        'allow-hotplug eth0',
        'iface eth0 inet static',
        '  address 192.0.2.10/24',
        '  netmask 255.255.255.0 # trailing comment',
        '  gateway 192.0.2.1',
        '  dns-nameservers 192.0.2.53 192.0.2.54',
        'iface eth0 inet6 auto',
        'iface eth1 inet dhcp',
        'iface eth2 inet manual',
      ].join('\n'),
    );
    expect(stanzas.get('eth0')).toEqual({
      'allow-hotplug': true,
      auto: true,
      type: 'static',
      address: '192.0.2.10/24',
      netmask: '255.255.255.0',
      gateway: '192.0.2.1',
      'dns-nameservers': ['192.0.2.53', '192.0.2.54'],
    });
    expect(stanzas.get('eth1')?.type).toBe('dhcp');
    expect(stanzas.get('eth2')?.type).toBe('manual');
    // loopback is not one of the spec's types: lo keeps `auto` and stays unconfigured.
    expect(stanzas.get('lo')).toMatchObject({ auto: true, type: 'unconfigured' });
  });
});

describe('ip -j addr', () => {
  it('maps addresses to dotted netmasks and carrier to online', () => {
    const parsed = parseIpAddrJson(
      JSON.stringify([
        {
          ifname: 'eth0',
          flags: ['BROADCAST', 'UP'],
          operstate: 'DOWN',
          addr_info: [
            { family: 'inet', local: '192.0.2.2', prefixlen: 25 },
            { family: 'inet6', local: 'fe80::1', prefixlen: 64 },
          ],
        },
        { ifname: 'lo', flags: ['LOOPBACK', 'UP', 'LOWER_UP'], operstate: 'UNKNOWN' },
      ]),
    );
    expect(parsed).toEqual([
      {
        name: 'eth0',
        ipv4: [{ address: '192.0.2.2', netmask: '255.255.255.128' }],
        ipv6: [{ address: 'fe80::1', netmask: '64' }],
        online: false,
      },
      { name: 'lo', ipv4: [], ipv6: [], online: true },
    ]);
  });
});

describe('time', () => {
  it("lists the zones and links of the system's tzdata.zi, else the runtime's list", () => {
    const real = readZones(DEFAULT_HOST_PATHS.zoneinfo);
    if (fs.existsSync(path.join(DEFAULT_HOST_PATHS.zoneinfo, 'tzdata.zi'))) {
      expect(real.source).toBe('tzdata');
      expect(real.zones).toEqual(
        expect.arrayContaining(['Europe/Berlin', 'UTC', 'America/New_York']),
      );
    }
    fs.mkdirSync(paths.zoneinfo);
    fs.writeFileSync(
      path.join(paths.zoneinfo, 'tzdata.zi'),
      '# version\nZ Europe/Berlin 0:53:28 - LMT 1893 Ap\nR E 1977 1980 - Ap Su>=1 1u 1 S\nL Etc/UTC UTC\n',
    );
    expect(readZones(paths.zoneinfo)).toEqual({
      zones: ['Europe/Berlin', 'UTC'],
      source: 'tzdata',
    });
    expect(readZones(path.join(dir, 'none')).source).toBe('intl');
  });

  it('reads the zone from /etc/timezone, else the localtime link', () => {
    fs.symlinkSync('/usr/share/zoneinfo/Europe/Berlin', paths.localtime);
    expect(readCurrentZone(paths)).toBe('Europe/Berlin');
    fs.writeFileSync(paths.timezoneFile, 'America/New_York\n');
    expect(readCurrentZone(paths)).toBe('America/New_York');
  });

  it('reads NTP servers from timesyncd and chrony', () => {
    expect(readNtpServers(paths)).toEqual([]);
    fs.writeFileSync(paths.timesyncdConf, '[Time]\n#NTP=ignored\nNTP=0.pool.ntp.org 192.0.2.1\n');
    fs.writeFileSync(paths.chronyConf, 'pool 2.debian.pool.ntp.org iburst\nserver 192.0.2.1\n');
    expect(readNtpServers(paths)).toEqual(['0.pool.ntp.org', '192.0.2.1', '2.debian.pool.ntp.org']);
  });
});

describe('systemd', () => {
  it("finds the unit only when systemd is init and the process is in a service's cgroup", () => {
    fs.writeFileSync(paths.cgroup, '0::/system.slice/netmon-appliance.service\n');
    expect(detectSystemdUnit(paths)).toBeNull();
    fs.mkdirSync(paths.systemdRun);
    expect(detectSystemdUnit(paths)).toBe('netmon-appliance.service');
    fs.writeFileSync(paths.cgroup, '0::/user.slice/session-1.scope\n');
    expect(detectSystemdUnit(paths)).toBeNull();
  });

  it('this machine (a container without systemd) has no unit', () => {
    if (!fs.existsSync('/run/systemd/system'))
      expect(detectSystemdUnit(DEFAULT_HOST_PATHS)).toBeNull();
  });
});
