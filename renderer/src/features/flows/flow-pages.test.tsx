// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BarList } from './bar-list.js';
import { flowSummaryOf } from './device-flows-panel.js';
import { FlowFilterForm } from './flow-explorer.js';
import { LIST_KEYS, type FlowFilters } from './flow-model.js';
import type { FlowTop } from './flows-api.js';
import { barsOf } from './top-page.js';

afterEach(cleanup);

function Form({ initial, onApply }: { initial: FlowFilters; onApply: (f: FlowFilters) => void }) {
  const [applied, setApplied] = useState<FlowFilters>(initial);
  return (
    <MantineProvider>
      <MemoryRouter>
        <FlowFilterForm
          keys={LIST_KEYS}
          applied={applied}
          onApply={(f) => {
            onApply(f);
            setApplied(f);
          }}
        />
        <button type="button" onClick={() => setApplied({ dst_ip: '192.0.2.1' })}>
          outside
        </button>
      </MemoryRouter>
    </MantineProvider>
  );
}

const input = (key: string) => screen.getByTestId<HTMLInputElement>(`filter-${key}`);

describe('flow filter form', () => {
  it('applies typed values as the list’s filters (ports numbers, protocol names)', () => {
    const onApply = vi.fn();
    render(<Form initial={{}} onApply={onApply} />);
    fireEvent.change(input('ip'), { target: { value: '10.0.0.1' } });
    fireEvent.change(input('port'), { target: { value: '53, 5353' } });
    fireEvent.change(input('protocol'), { target: { value: 'UDP' } });
    fireEvent.click(screen.getByTestId('apply-filters'));
    expect(onApply).toHaveBeenLastCalledWith({ ip: '10.0.0.1', port: [53, 5353], protocol: 'udp' });
    fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
    expect(onApply).toHaveBeenLastCalledWith({});
    expect(input('ip').value).toBe('');
  });

  it('shows filters set from outside (a link, a bar), extra keys included', () => {
    render(<Form initial={{ vlan: 12 }} onApply={vi.fn()} />);
    expect(input('vlan').value).toBe('12');
    expect(screen.queryByTestId('filter-dst_ip')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'outside' }));
    expect(input('dst_ip').value).toBe('192.0.2.1');
  });
});

const top: FlowTop = {
  startTime: '2026-01-01T00:00:00.000Z',
  endTime: '2026-01-01T08:00:00.000Z',
  series: [],
  top_sources: [
    { ip: '10.0.0.1', device_id: 3, host: 'core', bytes: 900, packets: 9, flows: 2 },
    { ip: '10.0.0.2', device_id: null, host: null, bytes: 100, packets: 1, flows: 1 },
  ],
  top_destinations: [
    { ip: '10.0.0.9', device_id: null, host: null, bytes: 1000, packets: 10, flows: 3 },
  ],
  top_conversations: [
    {
      src_ip: '10.0.0.1',
      src_id: 3,
      src_host: 'core',
      dst_ip: '10.0.0.9',
      dst_id: null,
      dst_host: null,
      dst_port: 443,
      protocol: 6,
      prot_name: 'tcp',
      bytes: 900,
      packets: 9,
      flows: 2,
    },
  ],
  top_protocols: [{ protocol: 6, prot_name: 'tcp', bytes: 1000, packets: 10, flows: 3 }],
};

describe('top talkers', () => {
  it('makes each top entry a bar filtering the flow list to it', () => {
    const bars = barsOf(top);
    expect(bars.sources.map((b) => [b.label, b.filters])).toEqual([
      ['core (10.0.0.1)', { src_ip: '10.0.0.1' }],
      ['10.0.0.2', { src_ip: '10.0.0.2' }],
    ]);
    expect(bars.destinations[0]!.filters).toEqual({ dst_ip: '10.0.0.9' });
    expect(bars.conversations[0]).toMatchObject({
      label: 'core → 10.0.0.9:443 tcp',
      filters: { src_ip: '10.0.0.1', dst_ip: '10.0.0.9', dst_port: 443, protocol: 6 },
    });
    expect(bars.protocols[0]!.filters).toEqual({ protocol: 6 });
  });

  it('renders bars as links to the flow list, host names as text', () => {
    const bars = barsOf({
      ...top,
      top_sources: [{ ...top.top_sources[0]!, host: '<img src=x onerror=alert(1)>' }],
    });
    render(
      <MantineProvider>
        <MemoryRouter>
          <BarList title="Top sources" bars={bars.sources} testId="top-sources" />
        </MemoryRouter>
      </MantineProvider>,
    );
    const link = screen.getByRole('link');
    const url = new URL(link.getAttribute('href')!, 'https://x');
    expect(url.pathname).toBe('/flows');
    expect(JSON.parse(url.searchParams.get('filters')!)).toEqual({ src_ip: '10.0.0.1' });
    expect(link.textContent).toContain('<img src=x onerror=alert(1)> (10.0.0.1)');
    expect(document.querySelector('img')).toBeNull();
  });
});

describe('device flow summary', () => {
  it('keeps well-formed partners of the loosely typed record', () => {
    expect(
      flowSummaryOf({
        bytes: 10,
        count: 2,
        top_partners: [{ ip: '10.0.0.9', device_id: null, host: null, bytes: 10 }, { ip: 5 }, null],
      }),
    ).toEqual({
      bytes: 10,
      count: 2,
      top_partners: [{ ip: '10.0.0.9', device_id: null, host: null, bytes: 10 }],
    });
  });
});
