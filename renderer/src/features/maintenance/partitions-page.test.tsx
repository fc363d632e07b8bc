// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { looksLikeCron, partitionView } from './partition-model.js';
import { PartitionsTable } from './partitions-page.js';

afterEach(cleanup);

describe('partitions page', () => {
  it('reads partition rows whatever their field spelling', () => {
    expect(
      partitionView({
        name: 'syslog_log_p20261101',
        rows: 12,
        size: 4096,
        first_time: 1,
        last_time: 2,
      }),
    ).toEqual({ name: 'syslog_log_p20261101', from: 1, to: 2, rows: 12, bytes: 4096, live: false });
    expect(partitionView('syslog_log_latest')).toMatchObject({
      name: 'syslog_log_latest',
      live: true,
    });
    expect(partitionView({ partition_name: 'x', row_count: '7' })).toMatchObject({
      name: 'x',
      rows: 7,
    });
    expect(looksLikeCron('0 0 * * *')).toBe(true);
    expect(looksLikeCron('0 0 * *')).toBe(false);
  });

  it('lists partitions with bounds, rows and size; the live one cannot be deleted', () => {
    const onDelete = vi.fn();
    render(
      <MantineProvider>
        <PartitionsTable
          onDelete={onDelete}
          partitions={[
            partitionView({ name: 'syslog_log_latest', rows: 5 }),
            partitionView({
              name: 'syslog_log_p20261101',
              rows: 1234,
              size: 2_097_152,
              first_time: '2026-11-01T00:00:00Z',
              last_time: '2026-11-07T23:59:59Z',
            }),
          ]}
        />
      </MantineProvider>,
    );
    expect(screen.getByText('1,234')).toBeTruthy();
    expect(screen.getByText('live')).toBeTruthy();
    expect(screen.queryByLabelText('Delete partition syslog_log_latest')).toBeNull();
    fireEvent.click(screen.getByLabelText('Delete partition syslog_log_p20261101'));
    expect(onDelete).toHaveBeenCalledWith('syslog_log_p20261101');
  });
});
