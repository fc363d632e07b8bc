import { describe, expect, it } from 'vitest';

import { attachmentName, EMPTY_DRAFT, startBody } from './captures-api.js';

describe('startBody', () => {
  it('leaves empty fields out (the appliance applies its defaults) and sends {} as the filter', () => {
    expect(startBody({ ...EMPTY_DRAFT, byteCapMiB: '', deadlineS: '' })).toEqual({
      filter: {},
      ephemeral: false,
    });
  });

  it('splits hosts, ports and vlans on commas and spaces; MiB to bytes', () => {
    expect(
      startBody({
        ...EMPTY_DRAFT,
        label: '  uplink  ',
        ifaces: ['eth0', 'lo'],
        hosts: '10.0.0.1, ::1',
        ports: '22 443,',
        vlans: '7',
        protocols: ['tcp', 'icmp'],
        byteCapMiB: 0.0625,
        deadlineS: 30,
        ephemeral: true,
      }),
    ).toEqual({
      label: 'uplink',
      filter: {
        hosts: ['10.0.0.1', '::1'],
        ports: [22, 443],
        vlans: [7],
        protocols: ['tcp', 'icmp'],
        ifaces: ['eth0', 'lo'],
      },
      byte_cap: 65536,
      deadline_s: 30,
      ephemeral: true,
    });
  });

  it('keeps a port that is not a number as NaN for the appliance to refuse (never silently dropped)', () => {
    const body = startBody({ ...EMPTY_DRAFT, ports: '22 ssh' });
    expect((body.filter as { ports: number[] }).ports).toEqual([22, Number.NaN]);
  });
});

describe('attachmentName', () => {
  it("takes the appliance's filename, else capture-<id>.pcapng", () => {
    expect(
      attachmentName('attachment; filename="uplink.pcapng"; filename*=UTF-8\'\'uplink.pcapng', 3),
    ).toBe('uplink.pcapng');
    expect(attachmentName(null, 3)).toBe('capture-3.pcapng');
  });
});
