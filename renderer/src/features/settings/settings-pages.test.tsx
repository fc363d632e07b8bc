// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { ApiError } from '../../lib/api-error.js';
import { DaemonCard, saveOutcome } from './daemons-page.js';
import { fieldErrors, HostEntryForm, HostMapTable, HostnameForm } from './hostname-page.js';
import { KeyForm, LicenseTable } from './license-page.js';
import { InterfaceEditor, ModeBanner, networkOutcome } from './network-page.js';
import { RetentionTable } from './retention-page.js';
import { ServicesTable } from './services-page.js';
import type { NetworkInterface, Service } from './settings-api.js';
import { OutcomeNotice } from './settings-shared.js';
import { timeBody, TimeForm } from './time-page.js';

afterEach(cleanup);

const wrap = (node: ReactNode) => render(<MantineProvider>{node}</MantineProvider>);

const service = (name: string, extra: Partial<Service> = {}): Service => ({
  name,
  kind: 'engine',
  status: 'running',
  pid: 4242,
  shared: false,
  started_at: '2026-12-04T22:00:00.000Z',
  error: null,
  ...extra,
});

describe('services', () => {
  it('offers actions on engines but none on the shared resources', () => {
    const onAction = vi.fn();
    wrap(
      <ServicesTable
        services={[
          service('syslog'),
          service('scheduler', { shared: true }),
          service('flows', { status: 'failed', error: 'bind EADDRINUSE' }),
        ]}
        onAction={onAction}
      />,
    );
    expect(screen.queryByLabelText('stop scheduler')).toBeNull();
    expect(screen.getByText('starts and stops with the appliance')).toBeTruthy();
    expect(screen.getByText('bind EADDRINUSE')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('restart syslog'));
    expect(onAction).toHaveBeenCalledWith('syslog', 'restart');
  });

  it('offers start only when stopped and stop only when running', () => {
    wrap(
      <ServicesTable
        services={[
          service('syslog'),
          service('flows', { status: 'stopped', pid: null }),
          service('alerts', { status: 'failed', error: 'boom' }),
          service('netmon.service', { kind: 'systemd', status: 'active' }),
        ]}
        onAction={vi.fn()}
      />,
    );
    const disabled = (label: string) => screen.getByLabelText<HTMLButtonElement>(label).disabled;
    expect(disabled('start syslog')).toBe(true);
    expect(disabled('stop syslog')).toBe(false);
    expect(disabled('start flows')).toBe(false);
    expect(disabled('stop flows')).toBe(true);
    expect(disabled('start alerts')).toBe(false);
    expect(disabled('stop alerts')).toBe(false);
    expect(disabled('restart alerts')).toBe(false);
    expect(disabled('start netmon.service')).toBe(true);
  });
});

const eth0: NetworkInterface = {
  name: 'eth0',
  ipv4: [{ address: '192.0.2.10', netmask: '255.255.255.0' }],
  ipv6: [],
  online: true,
  config: {
    'allow-hotplug': false,
    auto: true,
    type: 'dhcp',
    address: null,
    netmask: null,
    gateway: null,
    'dns-nameservers': [],
    use_sniffer: false,
    use_suricata: false,
  },
};

describe('network', () => {
  it('shows a dry run as a warning naming what would have been written, never as saved', () => {
    const outcome = networkOutcome({
      status: 201,
      hasError: false,
      dry_run: true,
      message: 'Dry run (APPLIANCE_NETWORK_MODE=dry-run): nothing was applied. Would write eth0',
    });
    expect(outcome).toMatchObject({ ok: true, warn: true });
    expect(outcome.title).toBe('Dry run: nothing was applied to this machine');
    wrap(<OutcomeNotice outcome={outcome} />);
    expect(screen.getByTestId('outcome').textContent).toContain('Would write eth0');
    expect(screen.getByTestId('outcome').textContent).not.toMatch(/saved/i);
  });

  it('explains the 120 s confirmation of an applied change', () => {
    const outcome = networkOutcome({
      status: 201,
      hasError: false,
      dry_run: false,
      message: 'Wrote eth0',
      confirm_within: 120,
    });
    expect(outcome.title).toBe('Applied: confirm within 120 s or it rolls back');
    expect(outcome.message).toContain('within 120 seconds');
  });

  it('puts up the DRY RUN banner only in dry-run mode', () => {
    const { rerender } = wrap(<ModeBanner mode="dry-run" />);
    expect(screen.getByTestId('dry-run-banner').textContent).toContain('DRY RUN');
    rerender(
      <MantineProvider>
        <ModeBanner mode="apply" />
      </MantineProvider>,
    );
    expect(screen.queryByTestId('dry-run-banner')).toBeNull();
    expect(screen.getByText(/120 seconds/)).toBeTruthy();
  });

  it('asks for an address only for a static configuration and submits the form', () => {
    const onSubmit = vi.fn();
    wrap(
      <InterfaceEditor iface={eth0} onSubmit={onSubmit} onCancel={vi.fn()} error="Refused: bad" />,
    );
    expect(screen.queryByLabelText(/^Address/)).toBeNull();
    expect(screen.getByText('Refused: bad')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('Packet capture (use_sniffer)'));
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(onSubmit).toHaveBeenCalledWith(
      expect.objectContaining({ type: 'dhcp', useSniffer: true, auto: true }),
    );
  });
});

describe('hostname and host map', () => {
  it('shows the messages of a 422 under the field', () => {
    const error = new ApiError('http', 422, 'The hostname is not valid', null, {
      hostname: ['The hostname is not a valid DNS name'],
    });
    expect(fieldErrors(error, 'hostname')).toBe('The hostname is not a valid DNS name');
    expect(fieldErrors(new ApiError('envelope', 200, 'Failed'), 'hostname')).toBe('Failed');
    const onSubmit = vi.fn();
    wrap(
      <HostnameForm
        current="appliance"
        error="The hostname is not a valid DNS name"
        onSubmit={onSubmit}
      />,
    );
    expect(screen.getByText('The hostname is not a valid DNS name')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Hostname'), { target: { value: ' bad_name ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set hostname' }));
    expect(onSubmit).toHaveBeenCalledWith('bad_name');
  });

  it('lists entries with edit and delete, and submits the documented types', () => {
    const onEdit = vi.fn();
    const onDelete = vi.fn();
    const entry = {
      id: 3,
      ip: '192.0.2.7',
      hostname: 'printer.example',
      host_name_type: 'fqdn' as const,
      node_type: 'access_point' as const,
      timestamp: '2026-12-04T22:00:00.000Z',
    };
    wrap(<HostMapTable entries={[entry]} onEdit={onEdit} onDelete={onDelete} />);
    expect(screen.getByText('access point')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('Delete 192.0.2.7 printer.example'));
    expect(onDelete).toHaveBeenCalledWith(entry);
    cleanup();
    const onSubmit = vi.fn();
    wrap(
      <HostEntryForm
        initial={{ ip: '', hostname: '', host_name_type: 'hostname', node_type: 'host' }}
        onSubmit={onSubmit}
        onCancel={vi.fn()}
      />,
    );
    fireEvent.change(screen.getByLabelText(/^IP address/), { target: { value: ' 192.0.2.9 ' } });
    fireEvent.change(screen.getByLabelText(/^Host name/), { target: { value: 'nas' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(onSubmit).toHaveBeenCalledWith({
      ip: '192.0.2.9',
      hostname: 'nas',
      host_name_type: 'hostname',
      node_type: 'host',
    });
  });
});

describe('time', () => {
  it('builds the body for each source and refuses a time that is not ISO 8601', () => {
    expect(timeBody({ type: 'ntp', tz: 'UTC', ntpserver: ' a.example  b ', manual: '' })).toEqual({
      body: { type: 'ntp', tz: 'UTC', ntpserver: 'a.example b' },
    });
    expect(timeBody({ type: 'ntp', tz: 'UTC', ntpserver: ' ', manual: '' })).toEqual({
      error: 'Name at least one NTP server',
    });
    expect(
      timeBody({ type: 'manual', tz: 'UTC', ntpserver: '', manual: '2026-12-04T22:40:00Z' }),
    ).toEqual({ body: { type: 'manual', tz: 'UTC', manual: '2026-12-04T22:40:00Z' } });
    const onSubmit = vi.fn();
    wrap(
      <TimeForm
        tzs={['UTC', 'Europe/Paris']}
        initial={{ type: 'manual', tz: 'UTC', ntpserver: '', manual: '' }}
        onSubmit={onSubmit}
      />,
    );
    fireEvent.change(screen.getByLabelText('Time (ISO 8601)'), {
      target: { value: '12/04/2026' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Save time settings' }));
    expect(onSubmit).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toContain('ISO 8601');
  });
});

describe('license', () => {
  it('shows the unlicensed empty state', () => {
    wrap(<LicenseTable entries={[]} />);
    expect(screen.getByText('This appliance is not licensed')).toBeTruthy();
  });

  it('hints the format and sends only a well-formed key, upper-cased', () => {
    const onSubmit = vi.fn();
    wrap(<KeyForm onSubmit={onSubmit} error={null} />);
    const input = screen.getByLabelText('Registration key');
    fireEvent.change(input, { target: { value: 'abc-123' } });
    fireEvent.click(screen.getByRole('button', { name: 'Activate' }));
    expect(onSubmit).not.toHaveBeenCalled();
    expect(
      screen.getByText('Six groups of six hex digits separated by dashes.', { exact: true }),
    ).toBeTruthy();
    fireEvent.change(input, { target: { value: 'abcdef-123456-abcdef-123456-abcdef-123456' } });
    fireEvent.click(screen.getByRole('button', { name: 'Activate' }));
    expect(onSubmit).toHaveBeenCalledWith('ABCDEF-123456-ABCDEF-123456-ABCDEF-123456');
  });

  it("shows the appliance's refusal", () => {
    wrap(<KeyForm onSubmit={vi.fn()} error="The registration key is not valid" />);
    expect(screen.getByText('The registration key is not valid')).toBeTruthy();
  });
});

describe('retention', () => {
  it('shows real sizes and marks an invalid number of days', () => {
    const onEdit = vi.fn();
    wrap(
      <RetentionTable
        rows={[
          { id: 1, table: 'syslog_log', retention: 84, size: 2_097_152 },
          { id: 2, table: 'audit_log', retention: 365, size: 1_048_576 },
        ]}
        edits={{ 2: '0' }}
        onEdit={onEdit}
      />,
    );
    expect(screen.getByText('2.0 MB')).toBeTruthy();
    expect(screen.getByText('3.0 MB')).toBeTruthy();
    expect(screen.getByText('At least 1 day')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Days to keep syslog_log'), { target: { value: '30' } });
    expect(onEdit).toHaveBeenCalledWith(1, '30');
  });
});

describe('daemons', () => {
  const daemon = {
    id: 7,
    name: 'alert-delivery',
    start_auto: true,
    config: [
      { var: 'proxy_url', value: 'http://127.0.0.1:3128' },
      { var: 'proxy_password', value: { __encrypted__: true } as const },
    ],
    vars: [
      { var: 'proxy_url', secret: false, description: 'HTTP proxy for webhook outlets' },
      { var: 'proxy_password', secret: true, description: 'Password of the HTTP proxy' },
    ],
  };

  it('shows a stored secret as set, and keeps it with the sentinel on save', () => {
    const onSave = vi.fn();
    wrap(<DaemonCard daemon={daemon} onSave={onSave} onStart={vi.fn()} />);
    expect(screen.getByTestId('secret-proxy_password').textContent).toBe('set');
    expect(screen.queryByLabelText('Value of proxy_password')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Save variables' }));
    expect(onSave).toHaveBeenLastCalledWith([
      { var: 'proxy_url', value: 'http://127.0.0.1:3128' },
      { var: 'proxy_password', value: { __encrypted__: true } },
    ]);
  });

  it('replaces a secret only when asked, removes a row, and starts with start_auto', () => {
    const onSave = vi.fn();
    const onStart = vi.fn();
    wrap(<DaemonCard daemon={daemon} onSave={onSave} onStart={onStart} />);
    fireEvent.click(screen.getByRole('button', { name: 'Replace' }));
    const secret = screen.getByLabelText('Value of proxy_password');
    expect(secret.getAttribute('type')).toBe('password');
    fireEvent.change(secret, { target: { value: 'n3w' } });
    fireEvent.click(screen.getByLabelText('Remove proxy_url'));
    fireEvent.click(screen.getByRole('button', { name: 'Save variables' }));
    expect(onSave).toHaveBeenLastCalledWith([{ var: 'proxy_password', value: 'n3w' }]);
    fireEvent.click(screen.getByLabelText('Start with the appliance'));
    fireEvent.click(screen.getByLabelText('Start alert-delivery'));
    expect(onStart).toHaveBeenCalledWith(false);
  });

  it('offers no save for a daemon that has and accepts no variable, but does for stored leftovers', () => {
    const bare = { id: 2, name: 'tools', start_auto: true, config: [], vars: [] };
    wrap(<DaemonCard daemon={bare} onSave={vi.fn()} onStart={vi.fn()} />);
    expect(screen.getByText('This daemon has no variables.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Save variables' })).toBeNull();
    cleanup();
    const leftover = { ...bare, config: [{ var: 'old_knob', value: '1' }] };
    const onSave = vi.fn();
    wrap(<DaemonCard daemon={leftover} onSave={onSave} onStart={vi.fn()} />);
    fireEvent.click(screen.getByLabelText('Remove old_knob'));
    fireEvent.click(screen.getByRole('button', { name: 'Save variables' }));
    expect(onSave).toHaveBeenLastCalledWith([]);
  });

  it('warns when the daemon was saved but not reloaded', () => {
    const warn = saveOutcome('syslog', {
      message: 'Configuration of syslog saved, but the daemon did not restart',
      reload_failed: true,
    });
    expect(warn).toMatchObject({ ok: true, warn: true, title: 'syslog: saved, but not reloaded' });
    expect(saveOutcome('syslog', { message: 'ok' }).warn).toBeUndefined();
  });
});
