/**
 * Access tokens: the caller's personal access tokens (permission `api`): create (shown once, with
 * a copy button), revoke. With `users`: another user's tokens (personal and OAuth, revoked rows up
 * to 30 days), revoke one, revoke all.
 */
import {
  Alert,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Paper,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { fetchUsers, useCaller } from '../../lib/caller.js';
import { formatTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';
import { expiryProblem, SCOPES, tokenNameProblem } from './token-rules.js';

interface TokenRow {
  id: number;
  name: string;
  origin: 'pat' | 'oauth';
  client_id: string | null;
  scopes: string[];
  revoked: boolean;
  expires_at: string | null;
  created_at: string | null;
  last_used_at: string | null;
}

function TokenTable({
  tokens,
  onRevoke,
  testId,
}: {
  tokens: TokenRow[];
  onRevoke: (t: TokenRow) => void;
  testId: string;
}) {
  return (
    <Table data-testid={testId}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Name</Table.Th>
          <Table.Th>Origin</Table.Th>
          <Table.Th>Scopes</Table.Th>
          <Table.Th>Created</Table.Th>
          <Table.Th>Expires</Table.Th>
          <Table.Th>Last used</Table.Th>
          <Table.Th w={90} />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {tokens.map((t) => (
          <Table.Tr key={t.id} c={t.revoked ? 'dimmed' : undefined} data-testid="token-row">
            <Table.Td>{t.name}</Table.Td>
            <Table.Td>
              <Badge color={t.origin === 'oauth' ? 'grape' : 'gray'}>{t.origin}</Badge>
            </Table.Td>
            <Table.Td>
              <Text size="xs">
                {t.scopes.length === SCOPES.length ? 'all' : t.scopes.join(', ')}
              </Text>
            </Table.Td>
            <Table.Td>{formatTime(t.created_at)}</Table.Td>
            <Table.Td>{formatTime(t.expires_at)}</Table.Td>
            <Table.Td>{t.last_used_at ? formatTime(t.last_used_at) : 'never'}</Table.Td>
            <Table.Td>
              {t.revoked ? (
                <Badge color="red" variant="outline">
                  revoked
                </Badge>
              ) : (
                <Button variant="default" color="red" onClick={() => onRevoke(t)}>
                  Revoke
                </Button>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function CreateToken({ onClose }: { onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [days, setDays] = useState<number | string>(365);
  const [scopes, setScopes] = useState<string[]>([...SCOPES]);
  const [touched, setTouched] = useState(false);
  const create = useMutation({
    mutationFn: () =>
      api.post<{ id: number; name: string; access_token: string; expires_at: string }>(
        '/api/tokens',
        {
          name,
          expires_in_days: Number(days),
          scopes,
        },
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.tokens.all }),
  });
  const nameProblem = touched ? tokenNameProblem(name) : null;
  const daysProblem = expiryProblem(Number(days));
  return (
    <Modal opened onClose={onClose} title="Create a personal access token" size="lg">
      {create.data ? (
        <Stack>
          <Alert color="yellow" variant="light">
            Copy the token now: the appliance shows it only once.
          </Alert>
          <Code block data-testid="new-token">
            {create.data.access_token}
          </Code>
          <Group justify="space-between">
            <CopyButton value={create.data.access_token}>
              {({ copied, copy }) => (
                <Button onClick={copy} color={copied ? 'teal' : undefined}>
                  {copied ? 'Copied' : 'Copy token'}
                </Button>
              )}
            </CopyButton>
            <Button variant="default" onClick={onClose}>
              Done
            </Button>
          </Group>
        </Stack>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setTouched(true);
            if (!tokenNameProblem(name) && !daysProblem) create.mutate();
          }}
        >
          <Stack gap="xs">
            <TextInput
              label="Name"
              required
              maxLength={100}
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              onBlur={() => setTouched(true)}
              error={nameProblem}
              data-autofocus
            />
            <NumberInput
              label="Expires after (days)"
              min={1}
              max={3650}
              value={days}
              onChange={setDays}
              error={daysProblem}
            />
            <MultiSelect
              label="Scopes (for the MCP tool surface)"
              data={[...SCOPES]}
              value={scopes}
              onChange={setScopes}
              description="Empty means all eight."
            />
            {create.isError ? <ErrorNotice error={create.error} /> : null}
            <Group justify="flex-end">
              <Button type="submit" loading={create.isPending} data-testid="create-token">
                Create token
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

function OtherUsersTokens() {
  const queryClient = useQueryClient();
  const users = useQuery({ queryKey: keys.me.users, queryFn: fetchUsers });
  const [userId, setUserId] = useState<string | null>(null);
  const id = userId === null ? null : Number(userId);
  const tokens = useQuery({
    queryKey: keys.tokens.ofUser(id ?? 0),
    queryFn: () => api.get<{ tokens: TokenRow[] }>(`/api/users/${id}/tokens`),
    select: (a) => a.tokens,
    enabled: id !== null,
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.tokens.all });
  const revoke = useMutation({
    mutationFn: (t: TokenRow) => api.delete(`/api/users/${id}/tokens/${t.id}`),
    onSuccess: refresh,
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const revokeAll = useMutation({
    mutationFn: () => api.post<{ revoked: number }>(`/api/users/${id}/tokens/revoke-all`),
    onSuccess: (a) => {
      notifications.show({
        message: `${a.revoked} token(s) revoked; the user's web session ended too.`,
      });
      refresh();
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  return (
    <Paper withBorder p="sm" mt="md">
      <Group justify="space-between" mb="xs">
        <Title order={2}>Another user's tokens</Title>
        <Group gap="xs">
          <Select
            aria-label="User"
            placeholder="Pick a user"
            searchable
            w={220}
            value={userId}
            onChange={setUserId}
            data={(users.data?.users ?? []).map((u) => ({
              value: String(u.id),
              label: u.username,
            }))}
          />
          <Button
            color="red"
            variant="default"
            disabled={id === null}
            onClick={() => window.confirm('Revoke every token of this user?') && revokeAll.mutate()}
          >
            Revoke all
          </Button>
        </Group>
      </Group>
      {id === null ? null : tokens.isError ? (
        <ErrorNotice error={tokens.error} />
      ) : tokens.isPending ? (
        <RowsSkeleton rows={3} />
      ) : tokens.data.length ? (
        <TokenTable tokens={tokens.data} onRevoke={(t) => revoke.mutate(t)} testId="user-tokens" />
      ) : (
        <Text size="sm" c="dimmed">
          No tokens.
        </Text>
      )}
    </Paper>
  );
}

export function Page() {
  const caller = useCaller();
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const mine = useQuery({
    queryKey: keys.tokens.mine,
    queryFn: () => api.get<{ tokens: TokenRow[] }>('/api/tokens'),
    select: (a) => a.tokens,
  });
  const revoke = useMutation({
    mutationFn: (t: TokenRow) => api.delete(`/api/tokens/${t.id}`),
    onMutate: async (t) => {
      // Optimistic: the row shows revoked at once; the list is refetched afterwards.
      await queryClient.cancelQueries({ queryKey: keys.tokens.mine });
      const previous = queryClient.getQueryData<{ tokens: TokenRow[] }>(keys.tokens.mine);
      if (previous)
        queryClient.setQueryData(keys.tokens.mine, {
          tokens: previous.tokens.map((x) => (x.id === t.id ? { ...x, revoked: true } : x)),
        });
      return { previous };
    },
    onError: (err, _t, context) => {
      if (context?.previous) queryClient.setQueryData(keys.tokens.mine, context.previous);
      notifications.show({ color: 'red', message: errorText(err) });
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.tokens.mine }),
  });
  return (
    <>
      <PageHeader
        title="Access tokens"
        subtitle="personal access tokens for scripts and MCP clients"
      >
        <Button onClick={() => setCreating(true)} data-testid="new-token-button">
          Create token
        </Button>
      </PageHeader>
      {mine.isError ? (
        <ErrorNotice error={mine.error} />
      ) : mine.isPending ? (
        <RowsSkeleton rows={4} />
      ) : mine.data.length === 0 ? (
        <EmptyState title="No tokens yet">
          Create one for a script or an MCP client; it acts as you and never exceeds your
          permissions.
        </EmptyState>
      ) : (
        <TokenTable tokens={mine.data} onRevoke={(t) => revoke.mutate(t)} testId="my-tokens" />
      )}
      {caller.can('users') ? <OtherUsersTokens /> : null}
      {creating ? <CreateToken onClose={() => setCreating(false)} /> : null}
    </>
  );
}
