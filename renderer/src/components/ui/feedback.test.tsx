// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api-error.js';
import { ErrorNotice } from './feedback.js';
import { StatusBadge } from './status.js';

afterEach(cleanup);

describe('feedback components', () => {
  it("show the API's message as text, never as markup", () => {
    const message = '<img src=x onerror=alert(1)> denied';
    render(
      <MantineProvider>
        <ErrorNotice error={new ApiError('denied', 401, message)} />
      </MantineProvider>,
    );
    expect(screen.getByRole('alert').textContent).toContain(message);
    expect(document.querySelector('img')).toBeNull();
    expect(screen.getByText('Not permitted')).toBeTruthy();
  });

  it('show down, up and unprobed devices apart', () => {
    render(
      <MantineProvider>
        <StatusBadge latency={-1} />
        <StatusBadge latency={null} />
      </MantineProvider>,
    );
    expect(screen.getByText('Down')).toBeTruthy();
    expect(screen.getByText('No probe')).toBeTruthy();
  });
});
