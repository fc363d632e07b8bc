/**
 * Agents (spec part 2, Agent installer and Agent administration): enrollment tokens (`agentadmin`:
 * list of active ones, create with the plaintext shown once, revoke), adopt-by-key (`devices` and
 * `write_devices`: the host's IP and the adoption key the agent printed at install time), and the
 * installer downloads (any signed-in user). The per-device probes live in the device page's Agent
 * tab (device-agent-panel.tsx).
 */
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  NumberInput,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link } from 'react-router';

import { EmptyState, ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import { tagsQuery } from '../../lib/devices-api.js';
import { formatAgo, formatTime } from '../../lib/format.js';
import {
  adoptionKeyProblem,
  DEFAULT_PROFILE,
  ipProblem,
  labelProblem,
  LABEL_MAX,
  tagsProblem,
  TTL_DEFAULT_SECONDS,
  TTL_UNITS,
  ttlProblem,
  ttlSeconds,
  type TtlUnit,
} from './agent-model.js';
import {
  adoptByKey,
  agentKeys,
  ARCHES,
  createToken,
  downloadInstaller,
  revokeToken,
  tokensQuery,
  type AdoptAnswer,
  type AdoptDraft,
  type Arch,
  type EnrollmentToken,
} from './agents-api.js';

/** Existing device tag slugs as suggestions (any slug may still be typed). */
function useTagSlugs(): string[] {
  const caller = useCaller();
  const tags = useQuery({
    ...tagsQuery,
    enabled: caller.canAny('devices', 'overwatch', 'write_devices'),
  });
  return useMemo(() => [...new Set((tags.data ?? []).map((t) => t.slug))], [tags.data]);
}

/** The active enrollment tokens (exported for its component test). */
export function TokensTable({
  tokens,
  onRevoke,
}: {
  tokens: EnrollmentToken[];
  onRevoke: (t: EnrollmentToken) => void;
}) {
  if (tokens.length === 0)
    return (
      <EmptyState title="No active enrollment tokens">
        Create one to enroll agents: the agent sends it once at install time and receives its keys.
        Consumed, revoked and expired tokens are not listed.
      </EmptyState>
    );
  return (
    <Table highlightOnHover data-testid="agent-tokens">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Label</Table.Th>
          <Table.Th>Tags</Table.Th>
          <Table.Th>Expires</Table.Th>
          <Table.Th>Use</Table.Th>
          <Table.Th w={100} />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {tokens.map((t) => (
          <Table.Tr key={t.id} data-testid="agent-token-row">
            <Table.Td>{t.label ? t.label : <Text c="dimmed">(no label)</Text>}</Table.Td>
            <Table.Td>
              <Group gap={4}>
                {t.tags.map((slug) => (
                  <Badge key={slug} variant="outline" size="sm">
                    {slug}
                  </Badge>
                ))}
              </Group>
            </Table.Td>
            <Table.Td title={formatTime(t.expires_at)}>
              {formatTime(t.expires_at)}{' '}
              <Text span size="xs" c="dimmed">
                ({formatAgo(t.expires_at)})
              </Text>
            </Table.Td>
            <Table.Td>{t.single_use ? 'single use' : 'reusable'}</Table.Td>
            <Table.Td>
              <Button
                variant="default"
                color="red"
                onClick={() => onRevoke(t)}
                aria-label={`Revoke token ${t.label || t.id}`}
              >
                Revoke
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** Create a token; its plaintext is shown once, with a copy button (exported for its test). */
export function CreateTokenDialog({ onClose }: { onClose: () => void }) {
  const queryClient = useQueryClient();
  const [label, setLabel] = useState('');
  const [tags, setTags] = useState<string[]>([]);
  const [amount, setAmount] = useState<number | string>(TTL_DEFAULT_SECONDS / TTL_UNITS.days);
  const [unit, setUnit] = useState<TtlUnit>('days');
  const [singleUse, setSingleUse] = useState(true);
  const slugs = useTagSlugs();
  const seconds = ttlSeconds(Number(amount), unit);
  const problems = {
    label: labelProblem(label),
    tags: tagsProblem(tags),
    ttl: amount === '' ? 'Enter a number.' : ttlProblem(seconds),
  };
  const create = useMutation({
    mutationFn: () => createToken({ label, tags, ttl_seconds: seconds, single_use: singleUse }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: agentKeys.tokens }),
  });
  const created = create.data;
  return (
    <Modal
      opened
      onClose={onClose}
      title={created ? 'Enrollment token created' : 'Create an enrollment token'}
      size="lg"
      closeOnClickOutside={!created}
    >
      {created ? (
        <Stack>
          <Alert color="yellow" variant="light" data-testid="token-once-warning">
            Copy the token now: it is not shown again. The appliance keeps only a hash of it.
          </Alert>
          <Code block data-testid="new-agent-token" style={{ wordBreak: 'break-all' }}>
            {created.token}
          </Code>
          <Text size="sm" c="dimmed">
            {created.single_use ? 'Single use' : 'Reusable'}, expires{' '}
            {formatTime(created.expires_at)}.
          </Text>
          <Group justify="space-between">
            <CopyButton value={created.token}>
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
            if (!problems.label && !problems.tags && !problems.ttl) create.mutate();
          }}
        >
          <Stack gap="xs">
            <TextInput
              label="Label"
              description="Where the token goes, e.g. the site or the host group"
              maxLength={LABEL_MAX}
              value={label}
              onChange={(e) => setLabel(e.currentTarget.value)}
              error={problems.label}
              data-autofocus
            />
            <TagsInput
              label="Tags"
              description="Tag slugs given to devices enrolled with it (at most 64 characters each)"
              data={slugs}
              value={tags}
              onChange={setTags}
              error={problems.tags}
            />
            <Group align="flex-start" gap="xs" grow>
              <NumberInput
                label="Valid for"
                min={1}
                value={amount}
                onChange={setAmount}
                error={problems.ttl}
                allowNegative={false}
              />
              <Select
                label="Unit"
                aria-label="Validity unit"
                data={['minutes', 'hours', 'days']}
                value={unit}
                allowDeselect={false}
                onChange={(v) => v && setUnit(v as TtlUnit)}
              />
            </Group>
            <Text size="xs" c="dimmed">
              From 1 minute to 30 days; the default is 1 day.
            </Text>
            <Switch
              label="Single use (consumed by the first enrollment)"
              checked={singleUse}
              onChange={(e) => setSingleUse(e.currentTarget.checked)}
            />
            {create.isError ? <ErrorNotice error={create.error} /> : null}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending} data-testid="create-agent-token">
                Create token
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

function RevokeDialog({ token, onClose }: { token: EnrollmentToken; onClose: () => void }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => revokeToken(token.id),
    onSuccess: onClose,
    // A 409 (already revoked) also means the list is stale.
    onSettled: () => void queryClient.invalidateQueries({ queryKey: agentKeys.tokens }),
  });
  return (
    <Modal opened onClose={onClose} title="Revoke an enrollment token">
      <Stack>
        <Text size="sm">
          Revoke the token <b>{token.label || `#${token.id}`}</b>? Agents can no longer enroll with
          it; agents already enrolled keep working. The row is kept for the audit.
        </Text>
        {revoke.isError ? <ErrorNotice error={revoke.error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button
            color="red"
            loading={revoke.isPending}
            onClick={() => revoke.mutate()}
            data-testid="confirm-revoke"
          >
            Revoke
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function TokensSection() {
  const tokens = useQuery(tokensQuery);
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<EnrollmentToken | null>(null);
  return (
    <Paper withBorder p="sm">
      <Group justify="space-between" mb={6}>
        <Title order={2}>Enrollment tokens</Title>
        <Button onClick={() => setCreating(true)} data-testid="new-agent-token-button">
          Create token
        </Button>
      </Group>
      {tokens.isError ? (
        <ErrorNotice error={tokens.error} onRetry={() => void tokens.refetch()} />
      ) : tokens.isPending ? (
        <RowsSkeleton rows={3} />
      ) : (
        <TokensTable tokens={tokens.data} onRevoke={setRevoking} />
      )}
      {creating ? <CreateTokenDialog onClose={() => setCreating(false)} /> : null}
      {revoking ? <RevokeDialog token={revoking} onClose={() => setRevoking(null)} /> : null}
    </Paper>
  );
}

/** The adopt-by-key form and its answer (exported for its component test). */
export function AdoptForm() {
  const queryClient = useQueryClient();
  const [ip, setIp] = useState('');
  const [key, setKey] = useState('');
  const [label, setLabel] = useState('');
  const [profile, setProfile] = useState(DEFAULT_PROFILE);
  const [tags, setTags] = useState<string[]>([]);
  const [touched, setTouched] = useState(false);
  const slugs = useTagSlugs();
  const problems = {
    ip: ipProblem(ip.trim()),
    key: adoptionKeyProblem(key.trim()),
    label: labelProblem(label),
    tags: tagsProblem(tags),
  };
  const adopt = useMutation({
    mutationFn: (draft: AdoptDraft) => adoptByKey(draft),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['devices'] }),
  });
  const draft = (): AdoptDraft => ({
    ip_address: ip.trim(),
    token: key.trim(),
    ...(label.trim() ? { label: label.trim() } : {}),
    profile: profile.trim() || DEFAULT_PROFILE,
    ...(tags.length ? { tags } : {}),
  });
  const answer: AdoptAnswer | undefined = adopt.data;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        setTouched(true);
        if (!Object.values(problems).some(Boolean)) adopt.mutate(draft());
      }}
      data-testid="adopt-form"
    >
      <Stack gap="xs">
        <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs">
          <TextInput
            label="IP address"
            required
            value={ip}
            onChange={(e) => setIp(e.currentTarget.value)}
            error={touched ? problems.ip : null}
            classNames={{ input: 'console-mono' }}
          />
          <TextInput
            label="Adoption key"
            description="Printed by the agent at install time"
            required
            maxLength={64}
            value={key}
            onChange={(e) => setKey(e.currentTarget.value)}
            error={touched ? problems.key : null}
            autoComplete="off"
          />
          <TextInput
            label="Label"
            description="Empty: the host's name, else its IP"
            maxLength={LABEL_MAX}
            value={label}
            onChange={(e) => setLabel(e.currentTarget.value)}
            error={problems.label}
          />
          <TextInput
            label="Profile"
            value={profile}
            onChange={(e) => setProfile(e.currentTarget.value)}
          />
        </SimpleGrid>
        <TagsInput
          label="Tags"
          description="Tag slugs; those outside your own tag scope are dropped by the appliance"
          data={slugs}
          value={tags}
          onChange={setTags}
          error={problems.tags}
        />
        <Text size="xs" c="dimmed">
          The appliance contacts the host on UDP port 489 and pushes its keys; this takes up to
          about 15 seconds.
        </Text>
        {adopt.isError ? <ErrorNotice error={adopt.error} title="Adoption failed" /> : null}
        {answer && answer.enrolled ? (
          <Alert color="teal" variant="light" data-testid="adopt-done">
            Adopted as{' '}
            <Anchor component={Link} to={`/devices/${answer.device_id}`}>
              device {answer.device_id}
            </Anchor>{' '}
            (agent <span className="console-mono">{answer.agent_uuid}</span>).
          </Alert>
        ) : null}
        {answer && !answer.enrolled ? (
          <Alert color="yellow" variant="light" role="alert" data-testid="adopt-unconfirmed">
            <Group justify="space-between" wrap="nowrap">
              <Text size="sm">
                The device exists (
                <Anchor component={Link} to={`/devices/${answer.device_id}`}>
                  device {answer.device_id}
                </Anchor>
                ) but the agent did not confirm it received its keys. Retry with the same key.
              </Text>
              <Button
                variant="default"
                loading={adopt.isPending}
                onClick={() => adopt.mutate(draft())}
              >
                Retry
              </Button>
            </Group>
          </Alert>
        ) : null}
        <Group justify="flex-end">
          <Button type="submit" loading={adopt.isPending} data-testid="adopt-submit">
            Adopt
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** The installer downloads (exported for its component test). */
export function Downloads() {
  const [outcome, setOutcome] = useState<Partial<Record<Arch, { ok: boolean; text: string }>>>({});
  const download = useMutation({
    mutationFn: (arch: Arch) => downloadInstaller(arch),
    onSuccess: (name, arch) =>
      setOutcome((o) => ({ ...o, [arch]: { ok: true, text: `Downloaded ${name}.` } })),
    onError: (err, arch) =>
      setOutcome((o) => ({ ...o, [arch]: { ok: false, text: errorText(err) } })),
  });
  return (
    <Stack gap="xs">
      <Group gap="xs">
        {ARCHES.map((arch) => (
          <Button
            key={arch}
            variant="default"
            loading={download.isPending && download.variables === arch}
            onClick={() => download.mutate(arch)}
            data-testid={`download-${arch}`}
          >
            Download for {arch}
          </Button>
        ))}
      </Group>
      {ARCHES.map((arch) => {
        const o = outcome[arch];
        return o ? (
          <Text
            key={arch}
            size="sm"
            c={o.ok ? 'teal' : 'red'}
            data-testid={`download-${arch}-result`}
          >
            {arch}: {o.text}
          </Text>
        ) : null;
      })}
    </Stack>
  );
}

export function Page() {
  const caller = useCaller();
  const adopts = caller.can('devices') && caller.can('write_devices');
  return (
    <Stack gap="sm">
      <PageHeader title="Agents" subtitle="enroll hosts, adopt them by key, get the installer" />
      {caller.can('agentadmin') ? <TokensSection /> : null}
      {adopts ? (
        <Paper withBorder p="sm">
          <Title order={2} mb={6}>
            Adopt by key
          </Title>
          <AdoptForm />
        </Paper>
      ) : null}
      <Paper withBorder p="sm">
        <Title order={2} mb={4}>
          Agent installer
        </Title>
        <Text size="sm" c="dimmed" mb="xs">
          Install the agent on a Linux or Windows host, then enroll it with a token or adopt it by
          the key it prints. Enrolled agents check in and appear under Pending devices until they
          are imported.
        </Text>
        <Downloads />
      </Paper>
      {!caller.loading && !caller.can('agentadmin') && !adopts ? (
        <Text size="sm" c="dimmed">
          Enrollment tokens need the agentadmin permission; adoption needs devices and
          write_devices.
        </Text>
      ) : null}
    </Stack>
  );
}
