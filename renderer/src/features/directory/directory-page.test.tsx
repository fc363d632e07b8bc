// @vitest-environment happy-dom
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EMPTY_CONFIG, type DirectoryConfig } from './directory-api.js';
import { ConfigForm, MappingsTable, SyncCounts, transportProblem } from './directory-page.js';

afterEach(cleanup);

const saved: DirectoryConfig = {
  ...EMPTY_CONFIG,
  enabled: true,
  host: 'ldap.example.test',
  port: 389,
  use_ssl: false,
  use_tls: true,
  base_dn: 'dc=example,dc=test',
  bind_dn: 'cn=reader,dc=example,dc=test',
};

const wrap = (node: React.ReactNode) => render(<MantineProvider>{node}</MantineProvider>);

describe('directory page', () => {
  it('starts with an empty bind password and sends none unless one is typed', () => {
    const onSave = vi.fn();
    wrap(<ConfigForm initial={saved} onSave={onSave} onTest={vi.fn()} />);
    const password = screen.getByLabelText<HTMLInputElement>('Bind password');
    expect(password.value).toBe('');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(onSave).toHaveBeenCalledWith(saved);
    expect(onSave.mock.calls[0]?.[0]).not.toHaveProperty('bind_password');
    fireEvent.change(password, { target: { value: 's3cret' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(onSave.mock.calls[1]?.[0]).toEqual({ ...saved, bind_password: 's3cret' });
  });

  it('refuses to save an enabled directory without LDAPS or StartTLS', () => {
    expect(transportProblem({ ...saved, use_tls: false })).toMatch(/LDAPS or StartTLS/);
    expect(transportProblem({ ...saved, enabled: false, use_tls: false })).toBeNull();
    const onSave = vi.fn();
    wrap(<ConfigForm initial={saved} onSave={onSave} onTest={vi.fn()} />);
    fireEvent.click(screen.getByLabelText('StartTLS'));
    expect(screen.getByRole('alert').textContent).toMatch(/plain LDAP/);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Save' }).disabled).toBe(true);
  });

  it('shows the test result with the groups found', () => {
    const onTest = vi.fn();
    wrap(
      <ConfigForm
        initial={saved}
        onSave={vi.fn()}
        onTest={onTest}
        testResult={{
          message: 'Bind successful: 2 groups found.',
          groups_found: 2,
          groups: ['cn=a,dc=x', 'cn=b,dc=x'],
        }}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect(onTest).toHaveBeenCalledWith(saved);
    expect(screen.getByTestId('test-result').textContent).toContain('2 groups found');
    expect(screen.getByText('cn=b,dc=x')).toBeTruthy();
  });

  it('lists mappings and tags per group and removes one mapping', () => {
    const onDelete = vi.fn();
    wrap(
      <MappingsTable
        onDelete={onDelete}
        mappings={[
          {
            id: 7,
            ldap_group_dn: 'cn=ops,dc=x',
            ldap_group_name: 'ops',
            permission_id: 5,
            permission_name: 'Devices',
            permission_slug: 'devices',
          },
        ]}
        tags={[{ ldap_group_dn: 'cn=ops,dc=x', tag_id: 1, slug: 'branch-a', name: 'Branch A' }]}
      />,
    );
    expect(screen.getByText('branch-a')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('Remove devices from cn=ops,dc=x'));
    expect(onDelete).toHaveBeenCalledWith(7);
  });

  it('shows the sync counts', () => {
    wrap(<SyncCounts result={{ message: 'Synced 3 users.', synced: 3, errors: 1 }} />);
    expect(screen.getByTestId('sync-counts').textContent).toBe('3 synced, 1 errors');
  });
});
