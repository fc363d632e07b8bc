/**
 * Users and access: the user list (without `users` a caller sees only their own row), create with
 * the password policy as hints, edit (permissions replace the set; tags as `[{value: slug}]`, null
 * clears; user 1's username and active flag locked), delete; MFA enrollment with a QR code and
 * confirmation, and disabling it (self, or `sa`).
 */
import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Group,
  List,
  Modal,
  MultiSelect,
  PasswordInput,
  PinInput,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { QrCode } from '../../components/ui/qr-code.js';
import { api } from '../../lib/api-client.js';
import { fetchUsers, useCaller, type UserRow } from '../../lib/caller.js';
import { keys } from '../../lib/query-keys.js';

export const PASSWORD_RULES: [RegExp, string][] = [
  [/.{8,}/, 'at least 8 characters'],
  [/[a-z]/, 'a lowercase letter'],
  [/[A-Z]/, 'an uppercase letter'],
  [/[0-9]/, 'a digit'],
];

function PasswordHints({ value }: { value: string }) {
  return (
    <List size="xs" spacing={0} mt={4}>
      {PASSWORD_RULES.map(([rule, text]) => (
        <List.Item key={text} c={rule.test(value) ? 'teal' : 'dimmed'}>
          {rule.test(value) ? '✓ ' : '· '}
          {text}
        </List.Item>
      ))}
    </List>
  );
}

interface Draft {
  id?: number;
  first_name: string;
  last_name: string;
  email: string;
  username: string;
  password: string;
  active: boolean;
  permissions: string[];
  tags: string[];
}

function UserForm({ draft, onClose }: { draft: Draft; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [d, setD] = useState(draft);
  const permissions = useQuery({
    queryKey: keys.users.permissions,
    queryFn: () =>
      api.get<{ permissions: { id: number; slug: string; name: string }[] }>('/api/getPermissions'),
    select: (a) => a.permissions,
  });
  const save = useMutation({
    mutationFn: async () => {
      if (d.id === undefined) {
        await api.post('/api/createUser', {
          first_name: d.first_name,
          last_name: d.last_name,
          email: d.email,
          username: d.username,
          password: d.password,
        });
        const all = await fetchUsers();
        const created = all.users.find((u) => u.username === d.username);
        if (created && (d.permissions.length || d.tags.length))
          await api.post('/api/saveUser', {
            user: created.id,
            permissions: d.permissions,
            tags: d.tags.length ? d.tags.map((value) => ({ value })) : null,
          });
        return;
      }
      const body: Record<string, unknown> = {
        user: d.id,
        first_name: d.first_name,
        last_name: d.last_name,
        email: d.email,
        permissions: d.permissions,
        tags: d.tags.length ? d.tags.map((value) => ({ value })) : null,
      };
      if (d.id !== 1) {
        body.username = d.username;
        body.active = d.active;
      }
      if (d.password) body.password = d.password;
      await api.post('/api/saveUser', body);
    },
    onSuccess: () => {
      notifications.show({
        color: 'teal',
        message: d.id === undefined ? `Created ${d.username}` : `Saved ${d.username}`,
      });
      void queryClient.invalidateQueries({ queryKey: keys.me.all });
      onClose();
    },
  });
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((x) => ({ ...x, [k]: v }));
  const locked = d.id === 1;
  return (
    <Modal
      opened
      onClose={onClose}
      title={d.id === undefined ? 'Create user' : `Edit ${draft.username}`}
      size="lg"
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <SimpleGrid cols={2} spacing="sm" verticalSpacing="xs">
          <TextInput
            label="First name"
            required
            maxLength={255}
            value={d.first_name}
            onChange={(e) => set('first_name', e.currentTarget.value)}
          />
          <TextInput
            label="Last name"
            required
            maxLength={255}
            value={d.last_name}
            onChange={(e) => set('last_name', e.currentTarget.value)}
          />
          <TextInput
            label="Email"
            type="email"
            required
            value={d.email}
            onChange={(e) => set('email', e.currentTarget.value)}
          />
          <TextInput
            label="Username"
            required
            disabled={locked}
            description={locked ? 'User 1 keeps its username' : undefined}
            value={d.username}
            onChange={(e) => set('username', e.currentTarget.value)}
          />
          <div>
            <PasswordInput
              label={d.id === undefined ? 'Password' : 'New password (optional)'}
              required={d.id === undefined}
              autoComplete="new-password"
              value={d.password}
              onChange={(e) => set('password', e.currentTarget.value)}
            />
            {d.id === undefined || d.password ? <PasswordHints value={d.password} /> : null}
          </div>
          <Switch
            mt="lg"
            label="Active"
            disabled={locked}
            checked={d.active}
            onChange={(e) => set('active', e.currentTarget.checked)}
            description={
              locked ? 'User 1 stays active' : 'Deactivating ends every session of the user'
            }
          />
          <MultiSelect
            label="Permissions"
            searchable
            value={d.permissions}
            onChange={(v) => set('permissions', v)}
            data={(permissions.data ?? []).map((p) => ({
              value: p.slug,
              label: `${p.slug} · ${p.name}`,
            }))}
          />
          <TagsInput
            label="Device tags (restricts what the user sees)"
            description="Tag slugs; empty means every device"
            value={d.tags}
            onChange={(v) => set('tags', v)}
          />
        </SimpleGrid>
        {save.isError ? (
          <Alert color="red" variant="light" mt="sm" role="alert">
            {errorText(save.error)}
          </Alert>
        ) : null}
        <Group justify="flex-end" mt="md">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {d.id === undefined ? 'Create' : 'Save'}
          </Button>
        </Group>
      </form>
    </Modal>
  );
}

interface MfaMaterial {
  mfaKey: string;
  hostname: string;
  username: string;
}

function MfaDialog({ user, onClose }: { user: UserRow; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const generate = useMutation({
    mutationFn: () => api.post<MfaMaterial>('/api/generateMfa', { userId: user.id }),
  });
  const confirm = useMutation({
    mutationFn: () => api.post<{ message: string }>('/api/confirmMfa', { userId: user.id, code }),
    onSuccess: () => {
      notifications.show({
        color: 'teal',
        message: 'MFA is on: the next sign-in asks for a code.',
      });
      void queryClient.invalidateQueries({ queryKey: keys.me.all });
      onClose();
    },
  });
  const disable = useMutation({
    mutationFn: () => api.post('/api/disableMfa', { userId: user.id }),
    onSuccess: () => {
      notifications.show({ message: 'MFA is off.' });
      void queryClient.invalidateQueries({ queryKey: keys.me.all });
      onClose();
    },
  });
  const m = generate.data;
  const uri = m
    ? `otpauth://totp/${encodeURIComponent(`${m.hostname}:${m.username}`)}?secret=${encodeURIComponent(m.mfaKey)}&issuer=${encodeURIComponent(m.hostname)}`
    : '';
  return (
    <Modal opened onClose={onClose} title={`Multi-factor sign-in for ${user.username}`}>
      {user.totp ? (
        <Stack>
          <Text size="sm">MFA is on for this account.</Text>
          {disable.isError ? <ErrorNotice error={disable.error} /> : null}
          <Button color="red" onClick={() => disable.mutate()} loading={disable.isPending}>
            Turn MFA off
          </Button>
        </Stack>
      ) : !m ? (
        <Stack>
          <Text size="sm">
            Enrolling stages a new secret; MFA turns on only when a code from the authenticator app
            is confirmed.
          </Text>
          {generate.isError ? <ErrorNotice error={generate.error} /> : null}
          <Button onClick={() => generate.mutate()} loading={generate.isPending}>
            Start enrollment
          </Button>
        </Stack>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            confirm.mutate();
          }}
        >
          <Stack align="center">
            <QrCode text={uri} label="QR code to scan with an authenticator app" />
            <Text size="xs" c="dimmed">
              Or type the key: <span className="console-mono">{m.mfaKey}</span>
            </Text>
            <PinInput
              length={6}
              type="number"
              oneTimeCode
              value={code}
              onChange={setCode}
              aria-label="Code from the app"
            />
            {confirm.isError ? <ErrorNotice error={confirm.error} /> : null}
            <Button type="submit" loading={confirm.isPending} disabled={code.length !== 6}>
              Confirm and turn on
            </Button>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

const draftOf = (u: UserRow): Draft => ({
  id: u.id,
  first_name: u.first_name,
  last_name: u.last_name,
  email: u.email,
  username: u.username,
  password: '',
  active: u.active,
  permissions: [...u.permissions],
  tags: [...u.tags],
});

export function Page() {
  const caller = useCaller();
  const queryClient = useQueryClient();
  const [params] = useSearchParams();
  const users = useQuery({ queryKey: keys.me.users, queryFn: fetchUsers });
  const [editing, setEditing] = useState<Draft | null>(null);
  const [mfaFor, setMfaFor] = useState<UserRow | null>(null);
  const canAdmin = caller.can('users');
  const remove = useMutation({
    mutationFn: (id: number) => api.post('/api/deleteUser', { user: id }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.me.all }),
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  useEffect(() => {
    // ?me=1 (the account menu) opens the caller's own MFA dialog once, on arrival.
    if (params.get('me') === '1' && caller.user) setMfaFor((open) => open ?? caller.user);
  }, [caller.user, params]);
  const rows = users.data?.users ?? [];
  return (
    <>
      <PageHeader
        title="Users"
        subtitle={
          users.data?.self_only
            ? 'your own account (you lack the users permission)'
            : `${rows.length} accounts`
        }
      >
        {canAdmin ? (
          <Button
            onClick={() =>
              setEditing({
                first_name: '',
                last_name: '',
                email: '',
                username: '',
                password: '',
                active: true,
                permissions: [],
                tags: [],
              })
            }
          >
            Create user
          </Button>
        ) : null}
      </PageHeader>
      {users.isError ? (
        <ErrorNotice error={users.error} />
      ) : users.isPending ? (
        <RowsSkeleton />
      ) : (
        <Table highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Username</Table.Th>
              <Table.Th>Name</Table.Th>
              <Table.Th>Email</Table.Th>
              <Table.Th>Source</Table.Th>
              <Table.Th>MFA</Table.Th>
              <Table.Th>Permissions</Table.Th>
              <Table.Th>Tags</Table.Th>
              <Table.Th w={100} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((u) => {
              const self = u.id === caller.user?.id;
              return (
                <Table.Tr key={u.id} c={u.active ? undefined : 'dimmed'}>
                  <Table.Td fw={600}>
                    {u.username}
                    {!u.active ? ' (inactive)' : ''}
                  </Table.Td>
                  <Table.Td>
                    {u.first_name} {u.last_name}
                  </Table.Td>
                  <Table.Td>{u.email}</Table.Td>
                  <Table.Td>{u.auth_source}</Table.Td>
                  <Table.Td>
                    <Badge color={u.totp ? 'teal' : 'gray'}>{u.totp ? 'on' : 'off'}</Badge>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={2}>
                      {u.permissions.map((p) => (
                        <Badge key={p} variant="outline" color={p === 'sa' ? 'grape' : 'gray'}>
                          {p}
                        </Badge>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>{u.tags.join(', ') || 'all devices'}</Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      {self || caller.can('sa') ? (
                        <Button variant="default" onClick={() => setMfaFor(u)}>
                          MFA
                        </Button>
                      ) : null}
                      {canAdmin ? (
                        <ActionIcon
                          aria-label={`Edit ${u.username}`}
                          onClick={() => setEditing(draftOf(u))}
                        >
                          ✎
                        </ActionIcon>
                      ) : null}
                      {canAdmin && u.id !== 1 && !self ? (
                        <ActionIcon
                          color="red"
                          aria-label={`Delete ${u.username}`}
                          onClick={() =>
                            window.confirm(`Delete ${u.username}?`) && remove.mutate(u.id)
                          }
                        >
                          ✕
                        </ActionIcon>
                      ) : null}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
      {editing ? <UserForm draft={editing} onClose={() => setEditing(null)} /> : null}
      {mfaFor ? <MfaDialog user={mfaFor} onClose={() => setMfaFor(null)} /> : null}
    </>
  );
}
