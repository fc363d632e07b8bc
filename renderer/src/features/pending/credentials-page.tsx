/** Autodiscovery credential sets (write-only secrets: shown as set, never their values). */
import {
  ActionIcon,
  Button,
  Group,
  Modal,
  PasswordInput,
  Select,
  SimpleGrid,
  Table,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { keys } from '../../lib/query-keys.js';

interface Credential {
  id: number;
  label: string;
  authuser: string | null;
  snmp_authprot: string | null;
  snmp_privprot: string | null;
}

interface Draft {
  id?: number;
  label: string;
  authuser: string;
  snmp_authprot: string;
  snmp_privprot: string;
  snmp_community: string;
  authpass: string;
  snmp_privpass: string;
}

const blank: Draft = {
  label: '',
  authuser: '',
  snmp_authprot: 'SHA',
  snmp_privprot: 'AES',
  snmp_community: '',
  authpass: '',
  snmp_privpass: '',
};

export function Page() {
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: keys.pending.credentials,
    queryFn: () => api.get<{ data: Credential[] }>('/api/getCredentials'),
    select: (a) => a.data,
  });
  const [draft, setDraft] = useState<Draft | null>(null);
  const save = useMutation({
    mutationFn: (d: Draft) => {
      const body: Record<string, unknown> = {
        action: 'addedit',
        label: d.label,
        authuser: d.authuser,
        snmp_authprot: d.snmp_authprot,
        snmp_privprot: d.snmp_privprot,
      };
      if (d.id !== undefined) body.id = d.id;
      // Omitted secrets keep the stored ones.
      if (d.snmp_community) body.snmp_community = d.snmp_community;
      if (d.authpass) body.authpass = d.authpass;
      if (d.snmp_privpass) body.snmp_privpass = d.snmp_privpass;
      return api.post('/api/addEditCredential', body);
    },
    onSuccess: () => {
      setDraft(null);
      notifications.show({ color: 'teal', message: 'Credential saved' });
      void queryClient.invalidateQueries({ queryKey: keys.pending.credentials });
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => api.post('/api/addEditCredential', { action: 'delete', id }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.pending.credentials }),
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const set = (key: keyof Draft, value: string) =>
    setDraft((d) => (d ? { ...d, [key]: value } : d));
  return (
    <>
      <PageHeader
        title="Discovery credentials"
        subtitle="SNMP credentials tried on discovered hosts"
      >
        <Button onClick={() => setDraft(blank)}>Add credential</Button>
      </PageHeader>
      {list.isError ? (
        <ErrorNotice error={list.error} />
      ) : list.isPending ? (
        <RowsSkeleton />
      ) : list.data.length === 0 ? (
        <EmptyState title="No credentials yet">
          Add the SNMP community or v3 user your devices answer to; discovery tries each set.
        </EmptyState>
      ) : (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Label</Table.Th>
              <Table.Th>v3 user</Table.Th>
              <Table.Th>Auth</Table.Th>
              <Table.Th>Privacy</Table.Th>
              <Table.Th w={80} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.map((c) => (
              <Table.Tr key={c.id}>
                <Table.Td>{c.label}</Table.Td>
                <Table.Td>{c.authuser ?? '–'}</Table.Td>
                <Table.Td>{c.snmp_authprot ?? '–'}</Table.Td>
                <Table.Td>{c.snmp_privprot ?? '–'}</Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    <ActionIcon
                      aria-label={`Edit ${c.label}`}
                      onClick={() =>
                        setDraft({
                          ...blank,
                          id: c.id,
                          label: c.label,
                          authuser: c.authuser ?? '',
                          snmp_authprot: c.snmp_authprot ?? 'SHA',
                          snmp_privprot: c.snmp_privprot ?? 'AES',
                        })
                      }
                    >
                      ✎
                    </ActionIcon>
                    <ActionIcon
                      color="red"
                      aria-label={`Delete ${c.label}`}
                      onClick={() => window.confirm(`Delete ${c.label}?`) && remove.mutate(c.id)}
                    >
                      ✕
                    </ActionIcon>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal
        opened={draft !== null}
        onClose={() => setDraft(null)}
        title={draft?.id ? 'Edit credential' : 'Add credential'}
      >
        {draft ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(draft);
            }}
          >
            <SimpleGrid cols={2} spacing="sm" verticalSpacing="xs">
              <TextInput
                label="Label"
                required
                value={draft.label}
                onChange={(e) => set('label', e.currentTarget.value)}
              />
              <PasswordInput
                label="Community (v1/v2c)"
                placeholder={draft.id ? 'leave empty to keep' : ''}
                value={draft.snmp_community}
                onChange={(e) => set('snmp_community', e.currentTarget.value)}
              />
              <TextInput
                label="v3 user"
                value={draft.authuser}
                onChange={(e) => set('authuser', e.currentTarget.value)}
              />
              <Select
                label="Auth protocol"
                value={draft.snmp_authprot}
                onChange={(v) => set('snmp_authprot', v ?? 'SHA')}
                data={['MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512']}
              />
              <PasswordInput
                label="Auth password"
                placeholder={draft.id ? 'leave empty to keep' : ''}
                value={draft.authpass}
                onChange={(e) => set('authpass', e.currentTarget.value)}
              />
              <Select
                label="Privacy protocol"
                value={draft.snmp_privprot}
                onChange={(v) => set('snmp_privprot', v ?? 'AES')}
                data={['DES', 'AES', 'AES256B', 'AES256R']}
              />
              <PasswordInput
                label="Privacy password"
                placeholder={draft.id ? 'leave empty to keep' : ''}
                value={draft.snmp_privpass}
                onChange={(e) => set('snmp_privpass', e.currentTarget.value)}
              />
            </SimpleGrid>
            {save.isError ? <ErrorNotice error={save.error} /> : null}
            <Group justify="flex-end" mt="md">
              <Button type="submit" loading={save.isPending}>
                Save
              </Button>
            </Group>
          </form>
        ) : null}
      </Modal>
    </>
  );
}
