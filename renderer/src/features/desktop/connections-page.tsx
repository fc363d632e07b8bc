/**
 * Saved appliances (desktop app): add one by URL (trust on first use: its SHA-256 fingerprint is
 * shown and pinned only once the user accepts), rename it, move it to another URL (a new probe
 * and acceptance; its tokens are dropped), remove it, and re-pin a changed certificate.
 */
import { Alert, Badge, Button, Group, Modal, Stack, Table, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';

import type { ConnectionSummary, ProbeResult } from '../../../../electron/contract/bridge.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useActiveConnection } from '../../lib/active-connection.js';
import { CertificateChanged, Fingerprint, TrustOnFirstUse } from './certificate-panels.js';
import { bridgeOrThrow, switchConnection, unwrap } from './desktop-start.js';
import { useDesktop } from './desktop-store.js';
import { StorageWarning } from './storage-warning.js';

type Editing = { mode: 'add' } | { mode: 'edit'; connection: ConnectionSummary };

function ConnectionForm({ editing, onDone }: { editing: Editing; onDone: () => void }) {
  const original = editing.mode === 'edit' ? editing.connection : null;
  const [url, setUrl] = useState(original?.kind === 'remote' ? original.origin : '');
  const [name, setName] = useState(original?.name ?? '');
  const [probe, setProbe] = useState<ProbeResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const bridge = bridgeOrThrow();
  const urlChanged = !original || (original.kind === 'remote' && url.trim() !== original.origin);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const save = (acceptSha256?: string) =>
    run(async () => {
      if (!original) {
        await unwrap(
          bridge.connections.add({
            url: url.trim(),
            name: name.trim() || undefined,
            acceptSha256: acceptSha256!,
          }),
        );
      } else {
        await unwrap(
          bridge.connections.edit({
            id: original.id,
            ...(name.trim() && name.trim() !== original.name ? { name: name.trim() } : {}),
            ...(urlChanged && acceptSha256 ? { url: url.trim(), acceptSha256 } : {}),
          }),
        );
      }
      useDesktop.getState().set({ connections: await unwrap(bridge.connections.list()) });
      onDone();
    });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!urlChanged) return void save();
    void run(async () => {
      const result = await unwrap(bridge.connections.probe({ url: url.trim() }));
      if (result.status === 'new' || result.status === 'changed') setProbe(result);
      else await save(result.certificate.sha256);
    });
  };

  if (probe) {
    return (
      <Stack>
        {error ? (
          <Alert color="red" variant="light" role="alert" data-testid="connection-error">
            {error}
          </Alert>
        ) : null}
        <TrustOnFirstUse
          probe={probe}
          busy={busy}
          onAccept={() => void save(probe.certificate.sha256)}
          onCancel={() => setProbe(null)}
        />
      </Stack>
    );
  }
  return (
    <form onSubmit={submit} aria-label={original ? 'Edit appliance' : 'Add appliance'}>
      <Stack gap="sm">
        {error ? (
          <Alert color="red" variant="light" role="alert" data-testid="connection-error">
            {error}
          </Alert>
        ) : null}
        {original?.kind !== 'embedded' ? (
          <TextInput
            label="Appliance URL"
            placeholder="https://appliance.example.net:8443"
            required
            value={url}
            onChange={(e) => setUrl(e.currentTarget.value)}
            data-testid="connection-url"
          />
        ) : null}
        <TextInput
          label="Name"
          placeholder="shown in the switcher"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          data-testid="connection-name"
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone} disabled={busy}>
            Cancel
          </Button>
          <Button type="submit" loading={busy} data-testid="connection-save">
            {urlChanged ? 'Check certificate' : 'Save'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

export function Page() {
  const connections = useDesktop((s) => s.connections);
  const problem = useDesktop((s) => s.certificateProblem);
  const active = useActiveConnection((s) => s.connectionId);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [removing, setRemoving] = useState<ConnectionSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const navigate = useNavigate();
  const bridge = bridgeOrThrow();

  const refresh = async () =>
    useDesktop.getState().set({ connections: await unwrap(bridge.connections.list()) });
  const remove = async (connection: ConnectionSummary) => {
    setError(null);
    try {
      await unwrap(bridge.connections.remove({ id: connection.id }));
      await refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
    setRemoving(null);
  };
  const problemConnection = problem
    ? connections.find((c) => c.id === problem.connectionId)
    : undefined;

  return (
    <>
      <PageHeader
        title="Appliances"
        subtitle="the embedded appliance and the remote ones this app connects to"
      >
        <Button onClick={() => setEditing({ mode: 'add' })} data-testid="add-connection">
          Add appliance
        </Button>
      </PageHeader>
      <StorageWarning />
      {error ? (
        <Alert color="red" variant="light" role="alert" mb="sm">
          {error}
        </Alert>
      ) : null}
      {problem && problemConnection && problem.presentedSha256 ? (
        <CertificateChanged
          name={problemConnection.name}
          origin={problemConnection.origin}
          pinnedSha256={problem.pinnedSha256 ?? problemConnection.pinnedSha256}
          presentedSha256={problem.presentedSha256}
          onRepin={async () => {
            await unwrap(
              bridge.connections.repin({
                id: problemConnection.id,
                acceptSha256: problem.presentedSha256!,
              }),
            );
            useDesktop.getState().set({ certificateProblem: null });
            await refresh();
          }}
        />
      ) : null}
      <Table striped highlightOnHover data-testid="connections-table" mt="sm">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>URL</Table.Th>
            <Table.Th>Pinned certificate (SHA-256)</Table.Th>
            <Table.Th>Sign-in</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {connections.map((c) => (
            <Table.Tr key={c.id} data-testid={`connection-${c.id}`}>
              <Table.Td>
                <Group gap={6}>
                  <Text size="sm" fw={c.id === active ? 700 : 400}>
                    {c.name}
                  </Text>
                  {c.kind === 'embedded' ? (
                    <Badge size="xs" variant="light">
                      this computer
                    </Badge>
                  ) : null}
                </Group>
              </Table.Td>
              <Table.Td>
                <Text size="sm" ff="monospace">
                  {c.origin}
                </Text>
              </Table.Td>
              <Table.Td maw={300}>
                {c.pinnedSha256 ? (
                  <Fingerprint sha256={c.pinnedSha256} />
                ) : (
                  <Text size="sm" c="dimmed">
                    none
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Badge color={c.signedIn ? 'teal' : 'gray'} variant="light">
                  {c.signedIn
                    ? c.signInMethod === 'device'
                      ? 'device flow'
                      : 'signed in'
                    : 'signed out'}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Group gap={4} justify="flex-end" wrap="nowrap">
                  {c.id !== active ? (
                    <Button
                      size="xs"
                      variant="light"
                      onClick={() => void switchConnection(c.id).then(() => navigate('/'))}
                    >
                      Open
                    </Button>
                  ) : null}
                  <Button
                    size="xs"
                    variant="default"
                    onClick={() => setEditing({ mode: 'edit', connection: c })}
                  >
                    Edit
                  </Button>
                  {c.kind === 'remote' ? (
                    <Button size="xs" variant="default" color="red" onClick={() => setRemoving(c)}>
                      Remove
                    </Button>
                  ) : null}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing?.mode === 'edit' ? `Edit ${editing.connection.name}` : 'Add an appliance'}
        size="lg"
      >
        {editing ? <ConnectionForm editing={editing} onDone={() => setEditing(null)} /> : null}
      </Modal>
      <Modal
        opened={removing !== null}
        onClose={() => setRemoving(null)}
        title="Remove this appliance?"
      >
        <Stack>
          <Text size="sm">
            {removing?.name} ({removing?.origin}) is forgotten with its pinned certificate and its
            sign-in. The appliance itself is not changed.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRemoving(null)}>
              Keep
            </Button>
            <Button
              color="red"
              onClick={() => removing && void remove(removing)}
              data-testid="confirm-remove"
            >
              Remove
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
