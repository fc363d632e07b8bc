// @vitest-environment happy-dom
/**
 * The log explorer against a fake appliance: a partial answer shows its notice with a Retry that
 * asks again and shows the complete answer.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { installFakeAppliance, renderInConsole, type Call } from '../../testing/console-harness.js';
import { LogExplorer } from './log-explorer.js';

let calls: Call[] = [];
let lists = 0;

const row = (id: number, message: string) => ({
  id,
  device_id: null,
  timestamp: '2026-12-05T01:00:00Z',
  facility: 1,
  severity: 3,
  source: 'app',
  message,
  host: null,
  sender: '127.0.0.1',
  malformed: 0,
});

beforeEach(() => {
  lists = 0;
  calls = installFakeAppliance({
    permissions: () => ['logs'],
    answer: (c) => {
      const window = { startTime: '2026-12-05T00:00:00Z', endTime: '2026-12-05T01:00:00Z' };
      if (c.url.startsWith('/api/syslog/list')) {
        lists += 1;
        const first = lists === 1;
        return {
          status: 200,
          body: {
            current_page: 1,
            per_page: 1000,
            data: first ? [row(2, 'newest line')] : [row(2, 'newest line'), row(1, 'older line')],
            total: first ? 1 : 2,
            total_capped: false,
            partial: first,
            ...window,
          },
        };
      }
      if (c.url.startsWith('/api/syslog/sevSum'))
        return { status: 200, body: { severityCounts: { 3: 2 }, partial: false, ...window } };
      if (c.url.startsWith('/api/syslog/filters'))
        return { status: 200, body: { message: 'ok', filters: [] } };
      return { status: 404, body: { status: false, message: 'not here' } };
    },
  });
});
afterEach(cleanup);

describe('log explorer', () => {
  it('a partial answer says so and its Retry asks again', async () => {
    renderInConsole(<LogExplorer feedId="syslog" />, { path: '/logs/syslog' });
    await screen.findByTestId('partial-notice');
    // (The virtual table lays out no rows without a layout engine: the echoed count tells.)
    expect(screen.getByTestId('echoed-window').textContent).toMatch(/· 1 row$/);
    fireEvent.click(screen.getByTestId('partial-retry'));
    await waitFor(() =>
      expect(screen.getByTestId('echoed-window').textContent).toMatch(/· 2 rows$/),
    );
    await waitFor(() => expect(screen.queryByTestId('partial-notice')).toBeNull());
    expect(calls.filter((c) => c.url.startsWith('/api/syslog/list'))).toHaveLength(2);
  });
});
