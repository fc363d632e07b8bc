/**
 * Directory (LDAP / Active Directory) settings (permission `sa`; spec part 1, Directory (LDAP)
 * integration): the configuration (the bind password is write-only: the field starts empty and an
 * empty field keeps the stored one), a test bind with the groups it found, group -> permission
 * mappings, group tag restrictions, and a sync with its counts.
 */
import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  MultiSelect,
  NumberInput,
  Paper,
  PasswordInput,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import {
  configQuery,
  deleteMapping,
  directoryKeys,
  EMPTY_CONFIG,
  groupTagsQuery,
  mappingsQuery,
  permissionsQuery,
  saveConfig,
  saveGroupPermissions,
  saveGroupTags,
  syncDirectory,
  testConfig,
  type DirectoryConfig,
  type DirectoryConfigInput,
  type GroupTag,
  type Mapping,
  type SyncAnswer,
  type TestAnswer,
} from './directory-api.js';

const toast = (color: string, message: string) => notifications.show({ color, message });

/** The rule the appliance applies too: an enabled directory needs LDAPS or StartTLS. */
export function transportProblem(c: DirectoryConfig): string | null {
  if (c.enabled && !c.use_ssl && !c.use_tls)
    return 'Choose LDAPS or StartTLS: passwords never go over plain LDAP.';
  return null;
}

/** The configuration form (exported for its component test). */
export function ConfigForm({
  initial,
  onSave,
  onTest,
  saving = false,
  testing = false,
  testResult = null,
}: {
  initial: DirectoryConfig;
  onSave: (input: DirectoryConfigInput) => void;
  onTest: (input: DirectoryConfigInput) => void;
  saving?: boolean;
  testing?: boolean;
  testResult?: TestAnswer | null;
}) {
  const [c, setC] = useState<DirectoryConfig>(initial);
  const [password, setPassword] = useState('');
  const set = <K extends keyof DirectoryConfig>(key: K, value: DirectoryConfig[K]) =>
    setC((prev) => ({ ...prev, [key]: value }));
  const input = (): DirectoryConfigInput => (password ? { ...c, bind_password: password } : c);
  const problem = transportProblem(c);
  const text = (key: keyof DirectoryConfig, label: string, max: number, placeholder?: string) => (
    <TextInput
      label={label}
      value={String(c[key])}
      maxLength={max}
      placeholder={placeholder}
      onChange={(e) => set(key, e.currentTarget.value as never)}
    />
  );
  return (
    <Paper withBorder p="md">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={2}>Connection</Title>
          <Checkbox
            label="Enabled"
            checked={c.enabled}
            onChange={(e) => set('enabled', e.currentTarget.checked)}
          />
        </Group>
        <SegmentedControl
          aria-label="Directory type"
          data={[
            { value: 'openldap', label: 'OpenLDAP' },
            { value: 'active_directory', label: 'Active Directory' },
          ]}
          value={c.directory_type}
          onChange={(v) => set('directory_type', v as DirectoryConfig['directory_type'])}
        />
        <SimpleGrid cols={{ base: 1, md: 3 }}>
          {text('host', 'Host', 255)}
          <NumberInput
            label="Port"
            min={1}
            max={65535}
            value={c.port}
            onChange={(v) => set('port', Number(v) || 0)}
          />
          <NumberInput
            label="Timeout (seconds)"
            min={1}
            max={60}
            value={c.timeout}
            onChange={(v) => set('timeout', Number(v) || 0)}
          />
        </SimpleGrid>
        <Group>
          <Checkbox
            label="LDAPS"
            checked={c.use_ssl}
            onChange={(e) => {
              const on = e.currentTarget.checked;
              setC((prev) => ({ ...prev, use_ssl: on, use_tls: on ? false : prev.use_tls }));
            }}
          />
          <Checkbox
            label="StartTLS"
            checked={c.use_tls}
            onChange={(e) => {
              const on = e.currentTarget.checked;
              setC((prev) => ({ ...prev, use_tls: on, use_ssl: on ? false : prev.use_ssl }));
            }}
          />
          <Checkbox
            label="Verify the certificate"
            checked={c.verify_tls}
            onChange={(e) => set('verify_tls', e.currentTarget.checked)}
          />
        </Group>
        {problem ? (
          <Text size="sm" c="red" role="alert">
            {problem}
          </Text>
        ) : null}
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          {text('base_dn', 'Base DN', 512, 'dc=example,dc=org')}
          {text('bind_dn', 'Bind DN', 512, 'cn=reader,dc=example,dc=org')}
          <PasswordInput
            label="Bind password"
            description="Write-only: leave empty to keep the stored password"
            value={password}
            autoComplete="new-password"
            onChange={(e) => setPassword(e.currentTarget.value)}
          />
          {text('search_filter', 'Search filter', 512, '(objectClass=inetOrgPerson)')}
          {text('username_attribute', 'Username attribute', 64, 'uid / sAMAccountName')}
          {text('email_attribute', 'Email attribute', 64, 'mail')}
          {text('first_name_attribute', 'First name attribute', 64, 'givenName')}
          {text('last_name_attribute', 'Last name attribute', 64, 'sn')}
        </SimpleGrid>
        <Group>
          <Checkbox
            label="Fall back to local accounts"
            checked={c.fallback_to_local}
            onChange={(e) => set('fallback_to_local', e.currentTarget.checked)}
          />
          <Checkbox
            label="Create users on first sign-in"
            checked={c.auto_provision}
            onChange={(e) => set('auto_provision', e.currentTarget.checked)}
          />
          <Checkbox
            label="Expand nested groups"
            checked={c.expand_nested_groups}
            onChange={(e) => set('expand_nested_groups', e.currentTarget.checked)}
          />
        </Group>
        <Group justify="flex-end">
          <Button variant="default" loading={testing} onClick={() => onTest(input())}>
            Test connection
          </Button>
          <Button loading={saving} disabled={problem !== null} onClick={() => onSave(input())}>
            Save
          </Button>
        </Group>
        {testResult ? (
          <Alert color="green" variant="light" title={testResult.message} data-testid="test-result">
            <Text size="sm">{testResult.groups_found} groups found</Text>
            <Stack gap={2} mt="xs">
              {testResult.groups.slice(0, 50).map((g) => (
                <Code key={g}>{g}</Code>
              ))}
            </Stack>
          </Alert>
        ) : null}
      </Stack>
    </Paper>
  );
}

/** Mappings grouped by group DN (exported for its component test). */
export function MappingsTable({
  mappings,
  tags,
  onDelete,
}: {
  mappings: Mapping[];
  tags: GroupTag[];
  onDelete: (id: number) => void;
}) {
  const groups = [
    ...new Set([...mappings.map((m) => m.ldap_group_dn), ...tags.map((t) => t.ldap_group_dn)]),
  ];
  if (groups.length === 0) return <EmptyState title="No group is mapped yet" />;
  return (
    <Table data-testid="mappings">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Group</Table.Th>
          <Table.Th>Permissions</Table.Th>
          <Table.Th>Tags</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {groups.map((dn) => (
          <Table.Tr key={dn}>
            <Table.Td className="console-mono">{dn}</Table.Td>
            <Table.Td>
              <Group gap={4}>
                {mappings
                  .filter((m) => m.ldap_group_dn === dn)
                  .map((m) => (
                    <Badge
                      key={m.id}
                      variant="light"
                      rightSection={
                        <ActionIcon
                          size="xs"
                          variant="transparent"
                          aria-label={`Remove ${m.permission_slug} from ${dn}`}
                          onClick={() => onDelete(m.id)}
                        >
                          ×
                        </ActionIcon>
                      }
                    >
                      {m.permission_slug}
                    </Badge>
                  ))}
              </Group>
            </Table.Td>
            <Table.Td>
              <Group gap={4}>
                {tags
                  .filter((t) => t.ldap_group_dn === dn)
                  .map((t) => (
                    <Badge key={t.tag_id} variant="outline">
                      {t.slug}
                    </Badge>
                  ))}
              </Group>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The sync result line (exported for its component test). */
export function SyncCounts({ result }: { result: SyncAnswer }) {
  return (
    <Text size="sm" data-testid="sync-counts">
      {result.synced} synced, {result.errors} errors
    </Text>
  );
}

function GroupEditor({ groups }: { groups: string[] }) {
  const client = useQueryClient();
  const permissions = useQuery(permissionsQuery);
  const mappings = useQuery(mappingsQuery);
  const tags = useQuery(groupTagsQuery);
  const [dn, setDn] = useState('');
  const [permissionIds, setPermissionIds] = useState<string[]>([]);
  const [tagSlugs, setTagSlugs] = useState<string[]>([]);
  const refresh = () => void client.invalidateQueries({ queryKey: directoryKeys.all });
  const pick = (value: string) => {
    setDn(value);
    setPermissionIds(
      (mappings.data ?? [])
        .filter((m) => m.ldap_group_dn === value)
        .map((m) => String(m.permission_id)),
    );
    setTagSlugs((tags.data ?? []).filter((t) => t.ldap_group_dn === value).map((t) => t.slug));
  };
  const save = useMutation({
    mutationFn: async () => {
      await saveGroupPermissions(dn.trim(), permissionIds.map(Number));
      await saveGroupTags(dn.trim(), tagSlugs);
    },
    onSuccess: () => {
      toast('green', 'Group saved.');
      refresh();
    },
    onError: (e) => toast('red', errorText(e)),
  });
  const remove = useMutation({
    mutationFn: deleteMapping,
    onSuccess: refresh,
    onError: (e) => toast('red', errorText(e)),
  });
  return (
    <Paper withBorder p="md">
      <Stack gap="sm">
        <Title order={2}>Groups</Title>
        <SimpleGrid cols={{ base: 1, md: 3 }}>
          <TextInput
            label="Group DN"
            value={dn}
            maxLength={512}
            list="directory-groups"
            onChange={(e) => pick(e.currentTarget.value)}
          />
          <MultiSelect
            label="Permissions"
            data={(permissions.data ?? []).map((p) => ({ value: String(p.id), label: p.slug }))}
            value={permissionIds}
            onChange={setPermissionIds}
            searchable
          />
          <TagsInput label="Device tags (slugs)" value={tagSlugs} onChange={setTagSlugs} />
        </SimpleGrid>
        <datalist id="directory-groups">
          {groups.map((g) => (
            <option key={g} value={g} />
          ))}
        </datalist>
        <Group justify="flex-end">
          <Button
            disabled={dn.trim() === ''}
            loading={save.isPending}
            onClick={() => save.mutate()}
          >
            Save group
          </Button>
        </Group>
        {mappings.isError ? (
          <ErrorNotice error={mappings.error} />
        ) : mappings.data && tags.data ? (
          <MappingsTable
            mappings={mappings.data}
            tags={tags.data}
            onDelete={(id) => remove.mutate(id)}
          />
        ) : (
          <RowsSkeleton rows={3} />
        )}
      </Stack>
    </Paper>
  );
}

export function Page() {
  const caller = useCaller();
  const allowed = caller.can('sa');
  const client = useQueryClient();
  const config = useQuery({ ...configQuery, enabled: allowed });
  const [testResult, setTestResult] = useState<TestAnswer | null>(null);
  const [syncResult, setSyncResult] = useState<SyncAnswer | null>(null);
  const save = useMutation({
    mutationFn: saveConfig,
    onSuccess: (a) => {
      toast('green', a.message);
      void client.invalidateQueries({ queryKey: directoryKeys.config });
    },
    onError: (e) => toast('red', errorText(e)),
  });
  const test = useMutation({
    mutationFn: testConfig,
    onSuccess: setTestResult,
    onError: (e) => {
      setTestResult(null);
      toast('red', errorText(e));
    },
  });
  const sync = useMutation({
    mutationFn: syncDirectory,
    onSuccess: setSyncResult,
    onError: (e) => toast('red', errorText(e)),
  });
  if (caller.loading) return <RowsSkeleton />;
  if (!allowed)
    return (
      <>
        <PageHeader title="Directory" />
        <EmptyState title="The sa permission is needed" />
      </>
    );
  return (
    <Stack gap="sm">
      <PageHeader title="Directory" subtitle="LDAP / Active Directory sign-in">
        {syncResult ? <SyncCounts result={syncResult} /> : null}
        <Button variant="default" loading={sync.isPending} onClick={() => sync.mutate()}>
          Sync users
        </Button>
      </PageHeader>
      {config.isError ? (
        <ErrorNotice error={config.error} onRetry={() => void config.refetch()} />
      ) : config.isPending ? (
        <RowsSkeleton />
      ) : (
        <ConfigForm
          initial={config.data ?? EMPTY_CONFIG}
          onSave={(input) => save.mutate(input)}
          onTest={(input) => test.mutate(input)}
          saving={save.isPending}
          testing={test.isPending}
          testResult={testResult}
        />
      )}
      <GroupEditor groups={testResult?.groups ?? []} />
    </Stack>
  );
}
