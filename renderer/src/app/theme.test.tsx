// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { Notifications, notifications } from '@mantine/notifications';
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { themeFor } from './theme.js';

afterEach(cleanup);

describe('console theme', () => {
  it('names the close button of every toast, whichever feature shows it', async () => {
    render(
      <MantineProvider theme={themeFor('comfortable')}>
        <Notifications />
      </MantineProvider>,
    );
    act(() => {
      notifications.show({ message: 'Saved', autoClose: false });
    });
    await screen.findByText('Saved');
    expect(screen.getByRole('button', { name: 'Dismiss' })).toBeTruthy();
  });
});
