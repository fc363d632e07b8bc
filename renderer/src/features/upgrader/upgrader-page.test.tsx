// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { UpgraderStatus } from './upgrader-api.js';
import { UpgraderPanel } from './upgrader-page.js';

afterEach(cleanup);

const STATUS: UpgraderStatus = {
  codename: 'bookworm',
  appliance_version: '0.1.0',
  database_clusters: [],
  upgrader_installed: true,
  upgrader_active: 'inactive',
  upgrader_enabled: 'disabled',
  upgrader_package_available: true,
};

const panel = (props: Partial<Parameters<typeof UpgraderPanel>[0]> = {}) => {
  const handlers = { onInstall: vi.fn(), onStart: vi.fn(), onStop: vi.fn() };
  render(
    <MantineProvider>
      <UpgraderPanel status={STATUS} session={null} busy={false} {...handlers} {...props} />
    </MantineProvider>,
  );
  return handlers;
};

describe('upgrader page', () => {
  it('starts only after the reboot warning is accepted', async () => {
    const { onStart } = panel();
    expect(screen.getByText('bookworm')).toBeTruthy();
    fireEvent.click(screen.getByText('Start upgrade…'));
    expect(onStart).not.toHaveBeenCalled();
    expect(await screen.findByText(/reboots the appliance/)).toBeTruthy();
    fireEvent.click(screen.getByText('Start, I understand it reboots'));
    expect(onStart).toHaveBeenCalledTimes(1);
  });

  it('shows the URL and the one-time token of a started upgrader, and stops it', () => {
    const { onStop } = panel({
      session: { url: 'https://nms.example.net:8444/', token: 'one-time-token-value' },
    });
    const session = screen.getByTestId('upgrader-session');
    expect(session.textContent).toContain('https://nms.example.net:8444/');
    expect(session.textContent).toContain('one-time-token-value');
    expect(session.textContent).toContain('shown only now');
    expect(
      (screen.getByText('Start upgrade…').closest('button') as HTMLButtonElement).disabled,
    ).toBe(true);
    fireEvent.click(screen.getByText('Stop upgrader'));
    expect(onStop).toHaveBeenCalledTimes(1);
  });

  it('installs only when a package is bundled and not installed; says so on a host without it', () => {
    const { onInstall } = panel({ status: { ...STATUS, upgrader_installed: false } });
    fireEvent.click(screen.getByText('Install upgrader'));
    expect(onInstall).toHaveBeenCalledTimes(1);
    cleanup();
    panel({
      status: {
        ...STATUS,
        upgrader_installed: false,
        upgrader_package_available: false,
        upgrader_active: 'unavailable',
        upgrader_enabled: 'unavailable',
      },
    });
    expect(screen.getByText('Not available on this host')).toBeTruthy();
    for (const label of ['Install upgrader', 'Start upgrade…', 'Stop upgrader'])
      expect((screen.getByText(label).closest('button') as HTMLButtonElement).disabled, label).toBe(
        true,
      );
  });
});
