/** OAuth client approval (permission `system`): pending registrations, oldest first; approve or delete. */
import { Badge, Button, Group, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { formatTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';

interface PendingClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  token_endpoint_auth_method: string;
  created_at: string | number;
}

export function Page() {
  const queryClient = useQueryClient();
  const pending = useQuery({
    queryKey: keys.oauth.pending,
    queryFn: () => api.get<{ clients: PendingClient[] }>('/api/oauth/clients/pending'),
    select: (a) => a.clients,
    refetchInterval: 30_000,
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.oauth.all });
  const approve = useMutation({
    mutationFn: (c: PendingClient) =>
      api.post(`/api/oauth/clients/${encodeURIComponent(c.client_id)}/approve`),
    onSuccess: (_r, c) => {
      notifications.show({ color: 'teal', message: `Approved ${c.client_name}` });
      refresh();
    },
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const remove = useMutation({
    mutationFn: (c: PendingClient) =>
      api.delete(`/api/oauth/clients/${encodeURIComponent(c.client_id)}`),
    onSuccess: refresh,
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  return (
    <>
      <PageHeader
        title="OAuth clients"
        subtitle="registrations waiting for approval, oldest first"
      />
      {pending.isError ? (
        <ErrorNotice error={pending.error} />
      ) : pending.isPending ? (
        <RowsSkeleton rows={4} />
      ) : pending.data.length === 0 ? (
        <EmptyState title="No client is waiting">
          MCP clients that register (POST /auth/register) wait here until someone with the system
          permission approves them.
        </EmptyState>
      ) : (
        <Table data-testid="oauth-pending">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Client</Table.Th>
              <Table.Th>Redirect URIs</Table.Th>
              <Table.Th>Grants</Table.Th>
              <Table.Th>Authentication</Table.Th>
              <Table.Th>Registered</Table.Th>
              <Table.Th w={170} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {pending.data.map((c) => (
              <Table.Tr key={c.client_id} data-testid="oauth-client">
                <Table.Td>
                  <Text size="sm" fw={600}>
                    {c.client_name}
                  </Text>
                  <Text size="xs" c="dimmed" className="console-mono">
                    {c.client_id}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {c.redirect_uris.map((u) => (
                    <Text key={u} size="xs" className="console-mono">
                      {u}
                    </Text>
                  ))}
                </Table.Td>
                <Table.Td>{c.grant_types.join(', ')}</Table.Td>
                <Table.Td>
                  <Badge color="gray">
                    {c.token_endpoint_auth_method === 'none' ? 'public' : 'confidential'}
                  </Badge>
                </Table.Td>
                <Table.Td>{formatTime(c.created_at)}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <Button onClick={() => approve.mutate(c)} data-testid="approve">
                      Approve
                    </Button>
                    <Button
                      variant="default"
                      color="red"
                      onClick={() => window.confirm(`Delete ${c.client_name}?`) && remove.mutate(c)}
                    >
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </>
  );
}
