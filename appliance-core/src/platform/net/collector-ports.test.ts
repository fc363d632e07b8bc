import dgram from 'node:dgram';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bindTcp,
  bindUdp,
  bindUdpTcpPair,
  closeTcp,
  closeUdp,
  CollectorPorts,
  PAIR_ATTEMPTS,
  portSettingOf,
  portToBind,
  tcpPortOf,
  udpPortOf,
} from './collector-ports.js';

const HOST = '127.0.0.1';
const opened: (dgram.Socket | net.Server)[] = [];
const keep = <T extends dgram.Socket | net.Server>(s: T): T => (opened.push(s), s);

afterEach(async () => {
  for (const s of opened.splice(0))
    await (s instanceof net.Server ? closeTcp(s) : closeUdp(s)).catch(() => undefined);
});

/** A port no one holds right now (UDP and TCP both free), found with throw-away sockets. */
async function freePort(): Promise<number> {
  const tcp = await bindTcp(HOST, 0);
  const port = tcpPortOf(tcp);
  await closeTcp(tcp);
  return port;
}

describe('collector ports', () => {
  it('maps settings: 0 disables, auto is ephemeral, a number is itself', () => {
    expect(portToBind(0)).toBeNull();
    expect(portToBind('auto')).toBe(0);
    expect(portToBind(5514)).toBe(5514);
  });

  it('binds an ephemeral UDP port and refuses a taken fixed one by name', async () => {
    const first = keep(await bindUdp(HOST, 0));
    const port = udpPortOf(first);
    expect(port).toBeGreaterThan(0);
    await expect(bindUdp(HOST, port)).rejects.toThrow(`UDP ${HOST}:${port} is already in use`);
  });

  it('binds syslog UDP and TCP on one number with auto, and both receive', async () => {
    const { udp, tcp, port } = await bindUdpTcpPair(HOST, 'auto', (s) => s.end('hi'));
    keep(udp);
    keep(tcp);
    expect(udpPortOf(udp)).toBe(port);
    expect(tcpPortOf(tcp)).toBe(port);
    const datagram = new Promise<string>((resolve) =>
      udp.once('message', (m) => resolve(String(m))),
    );
    const sender = keep(dgram.createSocket('udp4'));
    sender.send('<13>test', port, HOST);
    expect(await datagram).toBe('<13>test');
    const reply = await new Promise<string>((resolve, reject) => {
      const c = net.connect(port, HOST);
      let text = '';
      c.on('data', (d) => (text += String(d)));
      c.on('end', () => resolve(text));
      c.on('error', reject);
    });
    expect(reply).toBe('hi');
  });

  it('with auto, retries the pair when TCP finds the number UDP got taken', async () => {
    const blocked = await freePort();
    keep(await bindTcp(HOST, blocked)); // TCP taken, UDP free on `blocked`
    const asked: number[] = [];
    const { udp, tcp, port } = await bindUdpTcpPair(HOST, 'auto', undefined, {
      autoPort: (attempt) => {
        asked.push(attempt);
        return attempt === 1 ? blocked : 0;
      },
    });
    keep(udp);
    keep(tcp);
    expect(asked).toEqual([1, 2]);
    expect(port).not.toBe(blocked);
    expect(tcpPortOf(tcp)).toBe(port);
    // The first attempt's UDP socket was released.
    keep(await bindUdp(HOST, blocked));
  });

  it('gives up after a bounded number of attempts', async () => {
    const blocked = await freePort();
    keep(await bindTcp(HOST, blocked));
    let calls = 0;
    await expect(
      bindUdpTcpPair(HOST, 'auto', undefined, { autoPort: () => (calls++, blocked) }),
    ).rejects.toThrow(
      `no free port for UDP and TCP together on ${HOST} after ${PAIR_ATTEMPTS} attempts`,
    );
    expect(calls).toBe(PAIR_ATTEMPTS);
  });

  it('a fixed port taken on TCP fails naming it, and releases the UDP socket', async () => {
    const port = await freePort();
    keep(await bindTcp(HOST, port));
    await expect(bindUdpTcpPair(HOST, port)).rejects.toThrow(
      `TCP ${HOST}:${port} is already in use`,
    );
    keep(await bindUdp(HOST, port));
  });

  it('reports what collectors bound, in name order', () => {
    const ports = new CollectorPorts();
    expect(ports.report()).toEqual({});
    ports.set('syslog', { udp: 40000, tcp: 40000 });
    ports.set('netflow', { udp: 40001 });
    expect(JSON.stringify(ports.report())).toBe(
      '{"netflow":{"udp":40001},"syslog":{"udp":40000,"tcp":40000}}',
    );
    ports.delete('syslog');
    expect(ports.report()).toEqual({ netflow: { udp: 40001 } });
  });
});

describe("portSettingOf (a collector daemon's port variable)", () => {
  it('takes the variable when it is a port, else the configured setting', () => {
    expect(portSettingOf('5514', 514)).toBe(5514);
    expect(portSettingOf('0', 514)).toBe(0);
    expect(portSettingOf(undefined, 'auto')).toBe('auto');
    expect(portSettingOf('', 514)).toBe(514);
    for (const bad of ['65536', '99999', '-1', '01', '1e3', ' 514', '514;id'])
      expect(portSettingOf(bad, 2055), bad).toBe(2055);
    expect(portSettingOf('65535', 2055)).toBe(65535);
  });
});
