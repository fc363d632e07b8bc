// @vitest-environment happy-dom
import type { QueryClient } from '@tanstack/react-query';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { AlertEditor } from './alerts-page.js';
import type { AlertClass, AlertRow, HistoryRow, Outlet } from './alerts-api.js';
import { HistoryTable } from './history-page.js';
import { relayDraft, RelayForm } from './mail-relay-page.js';
import { OutletForm } from './outlets-page.js';
import { WindowForm } from './windows-page.js';
import { installFakeAppliance, renderInConsole, type Call } from '../../testing/console-harness.js';

let calls: Call[] = [];
let answer: (c: Call) => { status: number; body: unknown } = () => ({ status: 200, body: {} });

beforeEach(() => {
  calls = installFakeAppliance({ permissions: () => [], answer: (c) => answer(c) });
});
afterEach(cleanup);

const wrap = (node: ReactNode, client?: QueryClient) => renderInConsole(node, { client });

const writes = () => calls.filter((c) => c.method !== 'GET');

describe('maintenance window form', () => {
  it('shows the fields of the unit and refuses a dawom window without its nth weekday', async () => {
    wrap(
      <WindowForm
        initial={{
          label: 'Patch',
          recurrence_unit: 'dawom',
          maintenance_duration: 60,
          schedule_hour: 2,
          schedule_week: 2,
          schedule_day: null,
          schedule_month: null,
        }}
        onSaved={vi.fn()}
        onCancel={vi.fn()}
      />,
    );
    expect(screen.getByText('Weekday')).toBeTruthy();
    expect(screen.getByText('Which')).toBeTruthy();
    expect(screen.queryByText('Day of the month')).toBeNull();
    expect(screen.getByText(/appliance's time zone/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save window' }));
    await screen.findByText('Pick which weekday of the month');
    expect(writes()).toEqual([]);
  });

  it('posts the write shape with the unused fields null, and shows the API refusal', async () => {
    answer = () => ({ status: 400, body: { errors: { label: ['The label is taken.'] } } });
    const onSaved = vi.fn();
    wrap(
      <WindowForm
        initial={{
          label: 'Daily',
          recurrence_unit: 'day',
          maintenance_duration: 30,
          schedule_hour: 23,
          schedule_week: 4,
          schedule_day: 9,
          schedule_month: 1,
        }}
        onSaved={onSaved}
        onCancel={vi.fn()}
      />,
    );
    expect(screen.queryByText('Weekday')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Save window' }));
    await screen.findAllByText('The label is taken.');
    expect(writes()).toEqual([
      {
        method: 'POST',
        url: '/api/alerts/maintenance-windows',
        body: {
          label: 'Daily',
          recurrence_unit: 'day',
          maintenance_duration: 30,
          schedule_hour: 23,
          schedule_week: null,
          schedule_day: null,
          schedule_month: null,
        },
      },
    ]);
    expect(onSaved).not.toHaveBeenCalled();
  });
});

describe('outlet form', () => {
  const outlet: Outlet = {
    id: 5,
    name: 'ops hook',
    type: 'webhook',
    enabled: true,
    rate_limit_per_min: null,
    template_id: null,
    email_template_id: null,
    template: null,
    config: { url: 'https://hooks.example.test/x', authorization_header: { __encrypted__: true } },
  };

  it('shows a masked secret as stored and sends the sentinel back on save', async () => {
    answer = (c) => ({ status: 200, body: c.method === 'GET' ? [] : outlet });
    const onClose = vi.fn();
    wrap(<OutletForm outlet={outlet} onClose={onClose} />);
    expect(screen.getByTestId('secret-stored').textContent).toBe('stored');
    fireEvent.click(screen.getByRole('button', { name: 'Save outlet' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    const put = writes()[0]!;
    expect(put.method).toBe('PUT');
    expect(put.url).toBe('/api/outlets/5');
    expect(put.body).toMatchObject({
      name: 'ops hook',
      config: { authorization_header: { __encrypted__: true } },
    });
    expect(put.body).not.toHaveProperty('type');
  });

  it("shows the appliance's refusal of an address", async () => {
    answer = (c) =>
      c.method === 'GET'
        ? { status: 200, body: [] }
        : {
            status: 400,
            body: { errors: { 'config.url': ['The url points at a refused address.'] } },
          };
    wrap(<OutletForm outlet={null} onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText(/^Name/), { target: { value: 'hook' } });
    fireEvent.change(screen.getByLabelText(/^URL/), { target: { value: 'http://2130706433/' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save outlet' }));
    await screen.findAllByText('The url points at a refused address.');
    expect(writes()[0]).toMatchObject({
      method: 'POST',
      body: { type: 'webhook', config: { url: 'http://2130706433/' } },
    });
  });
});

describe('alert editor', () => {
  const classes = [
    {
      name: 'syslog_log',
      label: 'Syslog',
      description: '',
      parameters: [
        { name: 'contains', label: 'Message contains', type: 'string[]', default: [] },
        {
          name: 'lookback_minutes',
          label: 'Lookback (minutes)',
          type: 'number',
          required: true,
          default: 5,
          min: 1,
          max: 10080,
        },
      ],
      variables: [],
      default_email_template_id: 1,
      default_email_template_label: 'Syslog alert',
    },
  ] as AlertClass[];
  const unknown: AlertRow = {
    id: 3,
    label: 'Custom',
    class: 'vendor_thing',
    severity: 2,
    parameters: { knob: 7 },
    enabled: true,
    scope: 'global',
    scope_id: null,
    tag_filters: [],
    renotify_minutes: null,
    throttle_flip_count: null,
    throttle_flip_window_minutes: null,
    throttle_stable_minutes: null,
    disabled_reason: null,
    last_evaluated_at: null,
    last_result_count: null,
  };

  it('draws the parameter form of a known class and a JSON editor for an unknown one', () => {
    answer = (c) => ({
      status: 200,
      body: c.url.includes('/api/tags') ? { tags: [] } : { devices: [] },
    });
    const first = wrap(<AlertEditor alert={null} classes={classes} onClose={vi.fn()} />);
    expect(screen.getByTestId('param-form')).toBeTruthy();
    expect(screen.getByLabelText(/Lookback \(minutes\)/)).toBeTruthy();
    first.unmount();
    wrap(<AlertEditor alert={unknown} classes={classes} onClose={vi.fn()} />);
    expect(screen.queryByTestId('param-form')).toBeNull();
    expect(screen.getByText('Parameters (JSON)')).toBeTruthy();
  });

  it("shows the 403 text when the scope is outside the caller's tags", async () => {
    const refusal =
      'Your access is limited to tags: scope the alert to a device or tag inside your tags.';
    answer = (c) =>
      c.method === 'GET'
        ? { status: 200, body: c.url.includes('/api/tags') ? { tags: [] } : { devices: [] } }
        : { status: 403, body: { error: refusal } };
    const onClose = vi.fn();
    wrap(<AlertEditor alert={null} classes={classes} onClose={onClose} />);
    fireEvent.change(screen.getByLabelText(/^Label/), { target: { value: 'Link down' } });
    fireEvent.change(screen.getByLabelText(/Message contains/), {
      target: { value: 'link down\nge-0/0/1' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Create alert' }));
    expect((await screen.findByTestId('form-refusal')).textContent).toBe(refusal);
    expect(writes()[0]).toMatchObject({
      method: 'POST',
      url: '/api/alerts',
      body: {
        label: 'Link down',
        class: 'syslog_log',
        severity: 3,
        scope: 'global',
        scope_id: null,
        parameters: { contains: ['link down', 'ge-0/0/1'], lookback_minutes: 5 },
      },
    });
    expect(onClose).not.toHaveBeenCalled();
  });
});

describe('mail relay', () => {
  it('keeps the stored password through the sentinel and shows the answer', async () => {
    answer = () => ({ status: 200, body: { status: 201, hasError: false, smtp: 'Saved.' } });
    wrap(
      <RelayForm
        initial={relayDraft({
          sender: 'Appliance',
          email: 'noc@example.test',
          server: '127.0.0.1',
          port: 2525,
          auth: true,
          usessl: false,
          authname: 'noc',
          authpass: { __encrypted__: true },
        })}
      />,
    );
    expect(screen.getByTestId('password-stored')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save relay' }));
    expect((await screen.findByTestId('relay-result')).textContent).toBe('Saved.');
    expect(writes()[0]!.body).toEqual({
      action: 'set',
      sender: 'Appliance',
      email: 'noc@example.test',
      smtpserver: '127.0.0.1',
      port: 2525,
      auth: true,
      usessl: false,
      authname: 'noc',
      authpass: { __encrypted__: true },
    });
  });

  it('shows a hasError answer as a failure in its own words', async () => {
    answer = () => ({
      status: 200,
      body: { status: false, hasError: true, message: 'Test email failed: connection refused' },
    });
    wrap(<RelayForm initial={relayDraft(undefined)} />);
    fireEvent.click(screen.getByRole('button', { name: 'Send test' }));
    expect((await screen.findByTestId('relay-result')).textContent).toBe(
      'Test email failed: connection refused',
    );
    expect(writes()[0]!.body).toMatchObject({ action: 'test' });
  });
});

describe('history ledger', () => {
  it('lists each notification with its delivery or suppression', () => {
    const row: HistoryRow = {
      id: 1,
      source: 'modern',
      alert_id: 3,
      alert_label: 'Link down',
      alert_class: 'syslog_log',
      severity: 2,
      device_id: 1,
      device_label: 'core-sw',
      opened_at: '2026-12-04T10:00:00+00:00',
      closed_at: null,
      match_count: 4,
      message: '<img src=x> link down',
      suppressed_by: null,
      notifications: [
        {
          outlet_id: 1,
          outlet_name: 'ops hook',
          delivery_id: 17,
          suppressed_by: null,
          queued_at: '2026-12-04T10:00:01+00:00',
          status: 'failed',
          attempts: 5,
          error: 'HTTP 500',
          rate_delay_ms: 0,
          sent_at: null,
        },
        {
          outlet_id: 2,
          outlet_name: 'mail',
          delivery_id: null,
          suppressed_by: 'maintenance window Patch',
          queued_at: '2026-12-04T10:00:01+00:00',
          status: null,
          attempts: null,
          error: null,
          rate_delay_ms: null,
          sent_at: null,
        },
      ],
    };
    const { container } = wrap(<HistoryTable rows={[row]} />);
    expect(screen.getByText('failed after 5 attempts: HTTP 500')).toBeTruthy();
    expect(screen.getByText('suppressed: maintenance window Patch')).toBeTruthy();
    expect(screen.getByText('<img src=x> link down')).toBeTruthy();
    expect(container.querySelector('img')).toBeNull();
  });
});
