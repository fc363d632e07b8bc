/**
 * One IDS event (GET /api/eve/get/{event}): the signature, both endpoints with links to the
 * devices the appliance matched at intake, and the raw eve.json line as text (pretty-printed when
 * it parses). Unknown and invisible events are one answer (400 "Event ID does not exist.").
 */
import {
  Anchor,
  Badge,
  Code,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
  useComputedColorScheme,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';

import { EmptyState, ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import { formatTime } from '../../lib/format.js';
import { FEEDS, levelOf, severityLabel } from './log-model.js';
import { idsEventQuery, type IdsRow } from './logs-api.js';
import './logs.css';

function pretty(raw: string | null | undefined): string {
  if (!raw) return '';
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function Endpoint({ title, e, side }: { title: string; e: IdsRow; side: 'src' | 'dst' }) {
  const ip = e[`${side}_ip`];
  const port = e[`${side}_port`];
  const id = e[`${side}_id`];
  const host = e[`${side}_host`];
  const profile = e[`${side}_profile`];
  return (
    <Paper withBorder p="sm">
      <Title order={3} mb={4}>
        {title}
      </Title>
      <Table withRowBorders={false} verticalSpacing={2}>
        <Table.Tbody>
          <Table.Tr>
            <Table.Th w={90}>Address</Table.Th>
            <Table.Td className="console-mono">
              {ip}
              {port !== null && port !== undefined ? `:${port}` : ''}
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Device</Table.Th>
            <Table.Td>
              {id !== null && id !== undefined ? (
                <Anchor component={Link} to={`/devices/${id}`} data-testid={`${side}-device`}>
                  {host || `Device ${id}`}
                </Anchor>
              ) : (
                <Text span size="sm" c="dimmed">
                  no device holds this address
                </Text>
              )}
            </Table.Td>
          </Table.Tr>
          {profile ? (
            <Table.Tr>
              <Table.Th>Profile</Table.Th>
              <Table.Td>{profile}</Table.Td>
            </Table.Tr>
          ) : null}
        </Table.Tbody>
      </Table>
    </Paper>
  );
}

export function Page() {
  const caller = useCaller();
  const id = Number(useParams().event);
  const valid = Number.isInteger(id) && id > 0;
  const event = useQuery({ ...idsEventQuery(id), enabled: valid && caller.can('logs') });
  const feed = FEEDS.eve;
  const light = useComputedColorScheme('dark') === 'light';
  if (caller.loading) return <RowsSkeleton />;
  if (!caller.can('logs'))
    return (
      <EmptyState title="The logs permission is needed">
        Ask an administrator for the logs permission to read IDS events.
      </EmptyState>
    );
  const back = (
    <Anchor component={Link} to="/logs/ids" size="sm">
      ← IDS events
    </Anchor>
  );
  if (!valid || event.isError)
    return (
      <Stack gap="sm">
        <PageHeader title="IDS event">{back}</PageHeader>
        {event.isError ? (
          <ErrorNotice error={event.error} />
        ) : (
          <EmptyState title="Event ID does not exist." />
        )}
      </Stack>
    );
  if (!event.data) return <RowsSkeleton rows={10} />;
  const e = event.data;
  const level = levelOf(feed, e.severity);
  return (
    <Stack gap="sm">
      <PageHeader title={e.signature || `Signature ${e.signature_id}`} subtitle={`event ${e.id}`}>
        {back}
      </PageHeader>
      <Group gap="xs">
        <Badge
          color={`${(level?.color ?? 'gray.6').split('.')[0]}${light ? '.3' : ''}`}
          variant={light ? 'filled' : 'light'}
          autoContrast
        >
          {severityLabel(feed, e.severity)}
        </Badge>
        <Text size="sm">{formatTime(e.timestamp)}</Text>
        <Text size="sm" c="dimmed">
          signature {e.signature_id}
          {e.category ? ` · ${e.category}` : ''}
          {e.proto ? ` · ${e.proto}` : ''}
          {e.iface ? ` · on ${e.iface}` : ''}
          {e.vlan !== null && e.vlan !== undefined ? ` · VLAN ${e.vlan}` : ''}
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
        <Endpoint title="Source" e={e} side="src" />
        <Endpoint title="Destination" e={e} side="dst" />
      </SimpleGrid>
      <Paper withBorder p="sm">
        <Title order={3} mb={4}>
          Raw eve.json record
        </Title>
        <Code block className="console-log-raw" data-testid="eve-raw">
          {pretty(e.raw)}
        </Code>
      </Paper>
    </Stack>
  );
}
