import { describe, expect, it } from 'vitest';
import { paletteResults } from './palette-search.js';

const pages = [
  { path: '/', label: 'Overview' },
  { path: '/devices', label: 'Devices' },
];
const devices = [
  { id: 1, label: 'core-router', ip_address: '10.0.0.1' },
  { id: 2, label: 'edge', ip_address: '127.0.0.2' },
];

describe('command palette search', () => {
  it('turns "ping 127.0.0.2" into a tool run', () => {
    const [first] = paletteResults({ query: 'ping 127.0.0.2', pages, devices, canUseTools: true });
    expect(first).toMatchObject({ kind: 'tool', to: '/tools/ping?target=127.0.0.2&run=1' });
  });
  it('offers no tool runs without the tools permission', () => {
    const results = paletteResults({ query: 'ping 127.0.0.2', pages, devices, canUseTools: false });
    expect(results.some((r) => r.kind === 'tool')).toBe(false);
  });
  it('finds devices by name or IP, and pages by name', () => {
    expect(
      paletteResults({ query: '127.0.0', pages, devices, canUseTools: true }).map((r) => r.id),
    ).toContain('device:2');
    expect(
      paletteResults({ query: 'core', pages, devices, canUseTools: true }).map((r) => r.id),
    ).toContain('device:1');
    expect(
      paletteResults({ query: 'dev', pages, devices, canUseTools: true }).map((r) => r.id),
    ).toContain('page:/devices');
  });
});
