// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FilterForm } from './log-explorer.js';
import { FEEDS, type LogFilters } from './log-model.js';

afterEach(cleanup);

/** The form under a parent whose applied filters arrive late, as a URL navigation does. */
function Harness({ initial, onApply }: { initial: LogFilters; onApply: (f: LogFilters) => void }) {
  const [applied, setApplied] = useState<LogFilters>(initial);
  return (
    <MantineProvider>
      <FilterForm
        feed={FEEDS.syslog}
        applied={applied}
        onApply={(f) => {
          onApply(f);
          setTimeout(() => setApplied(f), 50);
        }}
      />
      <button type="button" onClick={() => setApplied({ message: 'from outside' })}>
        outside
      </button>
    </MantineProvider>
  );
}

describe('log filter form', () => {
  it('keeps what is typed right after Clear when the cleared filters arrive later', async () => {
    vi.useFakeTimers();
    try {
      const onApply = vi.fn();
      render(<Harness initial={{ severity: 'error' }} onApply={onApply} />);
      fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
      expect(onApply).toHaveBeenLastCalledWith({});
      const message = screen.getByTestId<HTMLInputElement>('filter-message');
      fireEvent.change(message, { target: { value: 'link down' } });
      await act(async () => {
        await vi.advanceTimersByTimeAsync(100);
      });
      expect(message.value).toBe('link down');
      fireEvent.click(screen.getByTestId('apply-filters'));
      expect(onApply).toHaveBeenLastCalledWith({ message: 'link down' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows a change made outside the form', () => {
    render(<Harness initial={{}} onApply={vi.fn()} />);
    fireEvent.click(screen.getByRole('button', { name: 'outside' }));
    expect(screen.getByTestId<HTMLInputElement>('filter-message').value).toBe('from outside');
  });
});
