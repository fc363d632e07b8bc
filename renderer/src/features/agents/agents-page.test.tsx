// @vitest-environment happy-dom
import { QueryClient } from '@tanstack/react-query';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { AdoptForm, CreateTokenDialog, Downloads, Page, TokensTable } from './agents-page.js';
import type { EnrollmentToken } from './agents-api.js';
import { installFakeAppliance, renderInConsole, type Call } from '../../testing/console-harness.js';
import { useSession } from '../../lib/session.js';

let calls: Call[] = [];
let answer: (c: Call) => { status: number; body: unknown } = () => ({ status: 200, body: {} });
let permissions: string[] = ['agentadmin', 'devices', 'write_devices'];

const PLAINTEXT = 'tok_e2e_0123456789abcdefghijklmnopqrstuvwxyzABCDEF';

beforeEach(() => {
  permissions = ['agentadmin', 'devices', 'write_devices'];
  calls = installFakeAppliance({ permissions: () => permissions, answer: (c) => answer(c) });
});
afterEach(cleanup);

const wrap = (node: ReactNode, client?: QueryClient) => renderInConsole(node, { client });

const writes = () => calls.filter((c) => c.method !== 'GET');

const row = (over: Partial<EnrollmentToken> = {}): EnrollmentToken => ({
  id: 7,
  label: 'Branch office',
  tags: ['branch', 'windows'],
  ttl_seconds: 86_400,
  single_use: true,
  expires_at: '2026-12-05T22:00:00Z',
  consumed_at: null,
  revoked_at: null,
  created_by_user_id: 1,
  ...over,
});

describe('enrollment tokens', () => {
  it('lists label, tags, expiry and use; revoke names the row', () => {
    const onRevoke = vi.fn();
    wrap(
      <TokensTable
        tokens={[row(), row({ id: 8, label: '', single_use: false, tags: [] })]}
        onRevoke={onRevoke}
      />,
    );
    expect(screen.getByText('Branch office')).toBeTruthy();
    expect(screen.getByText('branch')).toBeTruthy();
    expect(screen.getByText('windows')).toBeTruthy();
    expect(screen.getByText('single use')).toBeTruthy();
    expect(screen.getByText('reusable')).toBeTruthy();
    expect(screen.getByText('(no label)')).toBeTruthy();
    expect(screen.getAllByTestId('agent-token-row')[0]!.textContent).toMatch(/2026/);
    fireEvent.click(screen.getByLabelText('Revoke token Branch office'));
    expect(onRevoke).toHaveBeenCalledWith(expect.objectContaining({ id: 7 }));
  });

  it('creates with the defaults (1 day, single use) and shows the plaintext once with its warning', async () => {
    answer = (c) =>
      c.method === 'POST' && c.url === '/api/agent-tokens'
        ? {
            status: 201,
            body: { ...row({ id: 9, label: 'Lab', tags: ['lab'] }), token: PLAINTEXT },
          }
        : { status: 200, body: [] };
    const onClose = vi.fn();
    wrap(<CreateTokenDialog onClose={onClose} />);
    fireEvent.change(screen.getByLabelText('Label'), { target: { value: 'Lab' } });
    const tags = screen
      .getAllByLabelText('Tags')
      .find((el) => el instanceof HTMLInputElement && el.type !== 'hidden')!;
    fireEvent.change(tags, { target: { value: 'lab' } });
    fireEvent.keyDown(tags, { key: 'Enter' });
    fireEvent.click(screen.getByTestId('create-agent-token'));
    await screen.findByTestId('new-agent-token');
    expect(writes()).toEqual([
      {
        method: 'POST',
        url: '/api/agent-tokens',
        body: { label: 'Lab', tags: ['lab'], ttl_seconds: 86_400, single_use: true },
      },
    ]);
    expect(screen.getByTestId('new-agent-token').textContent).toBe(PLAINTEXT);
    expect(screen.getByTestId('token-once-warning').textContent).toMatch(/not shown again/);
    expect(screen.getByText('Copy token')).toBeTruthy();
  });

  it('suggests the existing device tag slugs', async () => {
    answer = (c) =>
      c.url === '/api/tags'
        ? {
            status: 200,
            body: { tags: [{ id: 1, slug: 'branch-office', name: 'Branch', type: 'device' }] },
          }
        : { status: 200, body: [] };
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    wrap(<CreateTokenDialog onClose={vi.fn()} />, client);
    const tags = screen
      .getAllByLabelText('Tags')
      .find((el) => el instanceof HTMLInputElement && el.type !== 'hidden')!;
    // The suggestions come with the tags answer: wait until the page's query holds it.
    await waitFor(() => expect(client.getQueryData(['devices', 'tags'])).toBeDefined());
    fireEvent.click(tags);
    fireEvent.change(tags, { target: { value: 'bran' } });
    expect(await screen.findByText('branch-office')).toBeTruthy();
  });

  it('refuses a TTL under 60 s or over 30 days and sends nothing', async () => {
    wrap(<CreateTokenDialog onClose={vi.fn()} />);
    fireEvent.click(screen.getByLabelText('Validity unit'));
    fireEvent.click(await screen.findByRole('option', { name: 'minutes' }));
    fireEvent.change(screen.getByLabelText('Valid for'), { target: { value: '0.5' } });
    fireEvent.click(screen.getByTestId('create-agent-token'));
    await screen.findByText('At least 1 minute (60 s).');
    fireEvent.change(screen.getByLabelText('Valid for'), { target: { value: '43201' } });
    fireEvent.click(screen.getByTestId('create-agent-token'));
    await screen.findByText('At most 30 days.');
    expect(writes()).toEqual([]);
  });

  it('sends the TTL in seconds from the unit and the single-use switch', async () => {
    answer = () => ({ status: 201, body: { ...row(), token: PLAINTEXT } });
    wrap(<CreateTokenDialog onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Valid for'), { target: { value: '90' } });
    fireEvent.click(screen.getByLabelText('Validity unit'));
    fireEvent.click(await screen.findByRole('option', { name: 'minutes' }));
    fireEvent.click(screen.getByLabelText('Single use (consumed by the first enrollment)'));
    fireEvent.click(screen.getByTestId('create-agent-token'));
    await screen.findByTestId('new-agent-token');
    expect(writes()[0]!.body).toMatchObject({ ttl_seconds: 5_400, single_use: false });
  });

  it("shows the appliance's 400 {errors} message and no token", async () => {
    answer = () => ({ status: 400, body: { errors: { label: ['The label is too long.'] } } });
    wrap(<CreateTokenDialog onClose={vi.fn()} />);
    fireEvent.click(screen.getByTestId('create-agent-token'));
    await screen.findByText('The label is too long.');
    expect(screen.queryByTestId('new-agent-token')).toBeNull();
  });

  it('revokes after a confirmation and shows a 409 plainly', async () => {
    answer = (c) =>
      c.method === 'DELETE'
        ? { status: 409, body: { error: 'Token already revoked' } }
        : { status: 200, body: [row()] };
    wrap(<Page />);
    fireEvent.click(await screen.findByLabelText('Revoke token Branch office'));
    expect(writes()).toEqual([]);
    fireEvent.click(await screen.findByTestId('confirm-revoke'));
    await screen.findByText('Token already revoked');
    expect(writes()).toEqual([{ method: 'DELETE', url: '/api/agent-tokens/7', body: undefined }]);
  });
});

describe('adopt by key', () => {
  const fill = (ip: string, key: string) => {
    fireEvent.change(screen.getByLabelText(/IP address/), { target: { value: ip } });
    fireEvent.change(screen.getByLabelText(/Adoption key/), { target: { value: key } });
  };

  it('refuses a bad IP or key (9 chars, or a character outside the set) and sends nothing', async () => {
    wrap(<AdoptForm />);
    fill('10.0.0.300', 'short-key');
    fireEvent.click(screen.getByTestId('adopt-submit'));
    await screen.findByText('Enter an IPv4 or IPv6 address.');
    expect(screen.getByText('The key has 10 to 64 characters.')).toBeTruthy();
    fill('10.0.0.3', 'abcdefghij;id');
    fireEvent.click(screen.getByTestId('adopt-submit'));
    await screen.findByText('Only letters, digits, _ and - are allowed.');
    expect(writes()).toEqual([]);
  });

  it('sends the profile default and shows enrolled=false as a warning with a Retry that resends', async () => {
    answer = () => ({
      status: 200,
      body: { device_id: 12, agent_uuid: 'agent-1234', enrolled: false },
    });
    wrap(<AdoptForm />);
    fill('192.0.2.44', 'Key_0123-abcd');
    fireEvent.click(screen.getByTestId('adopt-submit'));
    const warning = await screen.findByTestId('adopt-unconfirmed');
    expect(warning.textContent).toMatch(/did not confirm/);
    expect(writes()[0]).toEqual({
      method: 'POST',
      url: '/api/agent/adopt-by-token',
      body: { ip_address: '192.0.2.44', token: 'Key_0123-abcd', profile: 'dash_windows_wmi' },
    });
    answer = () => ({
      status: 200,
      body: { device_id: 12, agent_uuid: 'agent-1234', enrolled: true },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    await screen.findByTestId('adopt-done');
    expect(writes()).toHaveLength(2);
    expect(writes()[1]!.body).toEqual(writes()[0]!.body);
    expect(screen.queryByTestId('adopt-unconfirmed')).toBeNull();
  });

  it('sends the default profile when the field is cleared, and the label when given', async () => {
    answer = () => ({
      status: 200,
      body: { device_id: 13, agent_uuid: 'agent-5678', enrolled: true },
    });
    wrap(<AdoptForm />);
    fill('2001:db8::7', 'abcdefghij');
    fireEvent.change(screen.getByLabelText('Profile'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText(/^Label/), { target: { value: 'File server' } });
    fireEvent.click(screen.getByTestId('adopt-submit'));
    await screen.findByTestId('adopt-done');
    expect(writes()[0]!.body).toEqual({
      ip_address: '2001:db8::7',
      token: 'abcdefghij',
      label: 'File server',
      profile: 'dash_windows_wmi',
    });
  });

  it("shows the 404 as an error with the appliance's words", async () => {
    answer = () => ({
      status: 404,
      body: { error: 'Agent not reachable or adoption key not accepted' },
    });
    wrap(<AdoptForm />);
    fill('192.0.2.45', 'Key_0123-abcd');
    fireEvent.click(screen.getByTestId('adopt-submit'));
    await screen.findByText('Agent not reachable or adoption key not accepted');
    expect(screen.getByText('Adoption failed')).toBeTruthy();
    expect(screen.queryByTestId('adopt-done')).toBeNull();
  });
});

describe('installer downloads', () => {
  it('says "no installer staged" on a 404 and asks with the arch', async () => {
    answer = () => ({ status: 404, body: { status: false, message: 'No installer for arm64' } });
    wrap(<Downloads />);
    fireEvent.click(screen.getByTestId('download-arm64'));
    const result = await screen.findByTestId('download-arm64-result');
    expect(result.textContent).toBe('arm64: No installer staged for arm64.');
    expect(calls.at(-1)!.url).toBe('/api/agent/download?arch=arm64');
  });

  it('a 401 with a live session is a missing permission: its message, and the session stays', async () => {
    answer = (c) =>
      c.url === '/api/me'
        ? { status: 200, body: { id: 1 } }
        : {
            status: 401,
            body: {
              status: false,
              hasError: true,
              message: 'You do not have permission to perform this action.',
            },
          };
    wrap(<Downloads />);
    fireEvent.click(screen.getByTestId('download-amd64'));
    const result = await screen.findByTestId('download-amd64-result');
    expect(result.textContent).toMatch(/You do not have permission/);
    expect(calls.some((c) => c.url === '/api/me')).toBe(true);
    expect(useSession.getState().token).toBe('tok-1');
  });

  it("shows a 400's message", async () => {
    answer = () => ({ status: 400, body: { status: false, message: 'Unsupported architecture' } });
    wrap(<Downloads />);
    fireEvent.click(screen.getByTestId('download-amd64'));
    await waitFor(() =>
      expect(screen.getByTestId('download-amd64-result').textContent).toMatch(
        /Unsupported architecture/,
      ),
    );
  });
});

describe('the page by permission', () => {
  it('shows tokens only with agentadmin and adoption only with devices and write_devices', async () => {
    permissions = ['devices'];
    answer = () => ({ status: 200, body: [] });
    wrap(<Page />);
    await screen.findByText(/Enrollment tokens need the agentadmin permission/);
    expect(screen.queryByText('Enrollment tokens')).toBeNull();
    expect(screen.queryByTestId('adopt-form')).toBeNull();
    expect(screen.getByTestId('download-amd64')).toBeTruthy();
    expect(calls.some((c) => c.url.startsWith('/api/agent-tokens'))).toBe(false);
  });
});
