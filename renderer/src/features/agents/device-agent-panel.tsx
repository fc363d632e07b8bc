/**
 * A device's Agent tab (spec part 2, Agent probes and Agent administration): its processes
 * (sortable by memory or CPU, filtered), services (Name, State, DisplayName; the agent's
 * "unavailable" said plainly), disk usage (generate a scan, read the report as a tree, drill into
 * a folder) and, with `agentadmin`, deletion of a file or folder by absolute path, confirmed.
 *
 * Every probe asks the host through the appliance and may wait up to 15 s for the agent: the wait
 * shows as progress. Failures show the appliance's own message (400 `{message}` or HTTP 200
 * `{status: false, message}`), never a blank.
 */
import {
  ActionIcon,
  Alert,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Code,
  Group,
  Modal,
  Paper,
  Progress,
  SegmentedControl,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';

import { EmptyState, ErrorNotice, errorText } from '../../components/ui/feedback.js';
import { useCaller } from '../../lib/caller.js';
import { formatBytes } from '../../lib/format.js';
import {
  baseName,
  isUnavailable,
  pathProblem,
  processView,
  serviceView,
  usageNode,
  usageRoots,
  visibleProcesses,
  type ProcessSort,
  type UsageNode,
} from './agent-model.js';
import {
  agentKeys,
  deletePath,
  diskReportQuery,
  folderUsage,
  generateDiskUsage,
  PROBE_WAIT_MS,
  processesQuery,
  servicesQuery,
} from './agents-api.js';

/** The wait for an agent, as progress over the appliance's 15 s bound (exported for its test). */
export function ProbeProgress({ what, since }: { what: string; since: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  const elapsed = Math.min(PROBE_WAIT_MS, Math.max(0, now - since));
  return (
    <Stack gap={4} aria-busy="true" data-testid="probe-progress">
      <Text size="sm">
        Asking the agent for {what}… {Math.floor(elapsed / 1000)} s (the appliance waits at most{' '}
        {PROBE_WAIT_MS / 1000} s)
      </Text>
      <Progress
        value={(elapsed / PROBE_WAIT_MS) * 100}
        animated
        aria-label={`Waiting for the agent: ${what}`}
      />
    </Stack>
  );
}

/** When the current fetch of a query started (for ProbeProgress). */
function useSince(fetching: boolean): number {
  const [since, setSince] = useState(() => Date.now());
  useEffect(() => {
    if (fetching) setSince(Date.now());
  }, [fetching]);
  return since;
}

// ---- processes ----

/** The processes table with its filter and sort (exported for its component test). */
export function ProcessesTable({ rows }: { rows: unknown[] }) {
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<ProcessSort>('memory');
  const [descending, setDescending] = useState(true);
  const views = useMemo(() => rows.map(processView), [rows]);
  const shown = useMemo(
    () => visibleProcesses(views, filter, sort, descending),
    [views, filter, sort, descending],
  );
  const header = (key: ProcessSort, label: string) => (
    <Table.Th
      ta="right"
      aria-sort={sort === key ? (descending ? 'descending' : 'ascending') : 'none'}
    >
      <Anchor
        component="button"
        type="button"
        onClick={() => {
          if (sort === key) setDescending(!descending);
          else {
            setSort(key);
            setDescending(true);
          }
        }}
        data-testid={`sort-${key}`}
      >
        {label} {sort === key ? (descending ? '▼' : '▲') : ''}
      </Anchor>
    </Table.Th>
  );
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <TextInput
          aria-label="Filter processes"
          placeholder="Filter by name, command, user or PID"
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
          w={320}
        />
        <Text size="sm" c="dimmed" data-testid="process-count">
          {shown.length === views.length
            ? `${views.length} processes`
            : `${shown.length} of ${views.length} processes`}
        </Text>
      </Group>
      <div style={{ maxHeight: 520, overflow: 'auto' }}>
        <Table stickyHeader highlightOnHover data-testid="processes">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>PID</Table.Th>
              <Table.Th>Name</Table.Th>
              <Table.Th>User</Table.Th>
              <Table.Th>State</Table.Th>
              {header('cpu', 'CPU')}
              {header('memory', 'Memory')}
              <Table.Th>Command</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((p, i) => (
              <Table.Tr key={`${p.pid ?? 'x'}-${i}`} data-testid="process-row">
                <Table.Td className="console-mono">{p.pid ?? '–'}</Table.Td>
                <Table.Td>{p.name || '–'}</Table.Td>
                <Table.Td>{p.user || '–'}</Table.Td>
                <Table.Td>{p.state || '–'}</Table.Td>
                <Table.Td ta="right">{p.cpu === null ? '–' : `${p.cpu.toFixed(1)}%`}</Table.Td>
                <Table.Td ta="right">{formatBytes(p.memory)}</Table.Td>
                <Table.Td
                  className="console-mono"
                  style={{ maxWidth: 360, overflow: 'hidden', textOverflow: 'ellipsis' }}
                  title={p.command}
                >
                  <Text size="xs" truncate>
                    {p.command}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </div>
    </Stack>
  );
}

function ProcessesSection({ deviceId }: { deviceId: number }) {
  const q = useQuery(processesQuery(deviceId));
  const since = useSince(q.isFetching);
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>Processes</Title>
        <Button variant="default" onClick={() => void q.refetch()} loading={q.isFetching}>
          Refresh
        </Button>
      </Group>
      {q.isFetching ? <ProbeProgress what="its processes" since={since} /> : null}
      {q.isError && !q.isFetching ? (
        <ErrorNotice
          error={q.error}
          title="Could not read the processes"
          onRetry={() => void q.refetch()}
        />
      ) : null}
      {q.data ? (
        q.data.length ? (
          <ProcessesTable rows={q.data} />
        ) : (
          <EmptyState title="No processes reported" />
        )
      ) : null}
    </Stack>
  );
}

// ---- services ----

const STATE_COLOR: Record<string, string> = {
  Running: 'teal',
  Stopped: 'gray',
  Failed: 'red',
  Starting: 'blue',
  Stopping: 'blue',
};

/** The services table, or the agent's "unavailable" said plainly (exported for its test). */
export function ServicesView({ rows, error }: { rows?: unknown[]; error?: unknown }) {
  if (error !== undefined && error !== null) {
    const text = errorText(error);
    if (isUnavailable(text))
      return (
        <Alert
          color="gray"
          variant="light"
          title="Services unavailable"
          data-testid="services-unavailable"
        >
          The agent says this host's services cannot be listed: {text}
        </Alert>
      );
    return <ErrorNotice error={error} title="Could not read the services" />;
  }
  const views = (rows ?? []).map(serviceView);
  if (views.length === 0) return <EmptyState title="No services reported" />;
  return (
    <div style={{ maxHeight: 520, overflow: 'auto' }}>
      <Table stickyHeader highlightOnHover data-testid="services">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>DisplayName</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {views.map((s, i) => (
            <Table.Tr key={`${s.Name}-${i}`}>
              <Table.Td className="console-mono">{s.Name}</Table.Td>
              <Table.Td>
                <Badge color={STATE_COLOR[s.State] ?? 'yellow'} variant="light">
                  {s.State || 'Unknown'}
                </Badge>
              </Table.Td>
              <Table.Td>{s.DisplayName}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </div>
  );
}

function ServicesSection({ deviceId }: { deviceId: number }) {
  const q = useQuery(servicesQuery(deviceId));
  const since = useSince(q.isFetching);
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>Services</Title>
        <Button variant="default" onClick={() => void q.refetch()} loading={q.isFetching}>
          Refresh
        </Button>
      </Group>
      {q.isFetching ? <ProbeProgress what="its services" since={since} /> : null}
      {q.isFetching ? null : q.isError ? (
        <ServicesView error={q.error} />
      ) : q.data ? (
        <ServicesView rows={q.data} />
      ) : null}
    </Stack>
  );
}

// ---- disk usage ----

/** One folder level of the tree, children expandable, sizes formatted (exported for its test). */
export function UsageTree({
  nodes,
  onOpen,
  depth = 0,
}: {
  nodes: UsageNode[];
  onOpen: (path: string) => void;
  depth?: number;
}) {
  const [open, setOpen] = useState<Record<string, boolean>>({});
  const total = nodes.reduce((sum, n) => sum + (n.size ?? 0), 0);
  const sorted = [...nodes].sort((a, b) => (b.size ?? -1) - (a.size ?? -1));
  return (
    <Stack gap={2} data-testid={depth === 0 ? 'usage-tree' : undefined}>
      {sorted.map((n) => {
        const expanded = open[n.path] ?? false;
        const share = total > 0 && n.size !== null ? (n.size / total) * 100 : 0;
        return (
          <div key={n.path}>
            <Group gap="xs" wrap="nowrap" pl={depth * 18} data-testid="usage-row">
              {n.children.length ? (
                <ActionIcon
                  variant="subtle"
                  size="sm"
                  aria-label={`${expanded ? 'Collapse' : 'Expand'} ${n.path}`}
                  aria-expanded={expanded}
                  onClick={() => setOpen({ ...open, [n.path]: !expanded })}
                >
                  {expanded ? '▾' : '▸'}
                </ActionIcon>
              ) : (
                <span style={{ width: 22, display: 'inline-block' }} />
              )}
              <Text
                size="sm"
                className="console-mono"
                title={n.path}
                truncate
                style={{ flex: '1 1 auto' }}
              >
                {depth === 0 ? n.path : baseName(n.path)}
              </Text>
              <Progress value={share} w={120} size="sm" aria-hidden />
              <Text size="sm" ta="right" w={80}>
                {formatBytes(n.size)}
              </Text>
              <Button
                size="compact-xs"
                variant="subtle"
                onClick={() => onOpen(n.path)}
                aria-label={`Open ${n.path}`}
              >
                Open
              </Button>
            </Group>
            {expanded ? <UsageTree nodes={n.children} onOpen={onOpen} depth={depth + 1} /> : null}
          </div>
        );
      })}
    </Stack>
  );
}

function DiskSection({ deviceId }: { deviceId: number }) {
  const queryClient = useQueryClient();
  const report = useQuery(diskReportQuery(deviceId));
  const reportSince = useSince(report.isFetching);
  const [folderPath, setFolderPath] = useState('');
  const [trail, setTrail] = useState<string[]>([]);
  const generate = useMutation({
    mutationFn: () => generateDiskUsage(deviceId),
  });
  const generateSince = useSince(generate.isPending);
  const folder = useMutation({
    mutationFn: (path: string) => folderUsage(deviceId, path),
    onSuccess: (_a, path) => setTrail((t) => (t[t.length - 1] === path ? t : [...t, path])),
  });
  const folderSince = useSince(folder.isPending);
  const openFolder = (path: string) => {
    setFolderPath(path);
    folder.mutate(path);
  };
  const folderNode = folder.data && trail.length ? usageNode(folder.data.message) : null;
  const roots = usageRoots(report.data);
  const problem = folderPath === '' ? null : pathProblem(folderPath);
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={3}>Disk usage</Title>
        <Group gap="xs">
          <Button
            variant="default"
            onClick={() => generate.mutate()}
            loading={generate.isPending}
            data-testid="generate-disk-usage"
          >
            Generate
          </Button>
          <Button
            variant="default"
            onClick={() => {
              setTrail([]);
              folder.reset();
              void queryClient.invalidateQueries({ queryKey: agentKeys.diskReport(deviceId) });
            }}
            loading={report.isFetching}
          >
            Load report
          </Button>
        </Group>
      </Group>
      <Text size="xs" c="dimmed">
        Generate starts a scan of the host's local filesystems in the background; load the report
        when it has finished. Open a folder to measure it now.
      </Text>
      {generate.isPending ? <ProbeProgress what="a disk scan" since={generateSince} /> : null}
      {generate.isError ? (
        <ErrorNotice error={generate.error} title="The scan did not start" />
      ) : null}
      {generate.isSuccess ? (
        <Alert color="teal" variant="light">
          {typeof generate.data.message === 'string'
            ? generate.data.message
            : 'The scan started; load the report when it has finished.'}
        </Alert>
      ) : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (folderPath && !problem) {
            setTrail([]);
            openFolder(folderPath.trim());
          }
        }}
      >
        <Group align="flex-start" gap="xs">
          <TextInput
            aria-label="Folder path"
            placeholder="/var/log or C:\Users"
            value={folderPath}
            onChange={(e) => setFolderPath(e.currentTarget.value)}
            error={problem}
            classNames={{ input: 'console-mono' }}
            w={360}
          />
          <Button type="submit" variant="default" disabled={!folderPath || !!problem}>
            Open folder
          </Button>
        </Group>
      </form>
      {folder.isPending ? <ProbeProgress what="the folder's usage" since={folderSince} /> : null}
      {folder.isError ? (
        <ErrorNotice error={folder.error} title="The folder could not be measured" />
      ) : null}
      {trail.length ? (
        <Group gap="xs">
          <Breadcrumbs separator="›">
            <Anchor
              component="button"
              type="button"
              onClick={() => {
                setTrail([]);
                folder.reset();
              }}
            >
              Report
            </Anchor>
            {trail.map((p, i) => (
              <Anchor
                key={p}
                component="button"
                type="button"
                className="console-mono"
                onClick={() => {
                  setTrail(trail.slice(0, i));
                  openFolder(p);
                }}
              >
                {i === 0 ? p : baseName(p)}
              </Anchor>
            ))}
          </Breadcrumbs>
        </Group>
      ) : null}
      {trail.length > 0 || folder.isPending ? (
        folderNode ? (
          <UsageTree key={folderNode.path} nodes={[folderNode]} onOpen={openFolder} />
        ) : null
      ) : (
        <>
          {report.isFetching ? <ProbeProgress what="its disk report" since={reportSince} /> : null}
          {report.isError && !report.isFetching ? (
            <ErrorNotice error={report.error} title="No disk report" />
          ) : null}
          {report.data !== undefined && !report.isFetching ? (
            roots.length ? (
              <UsageTree nodes={roots} onOpen={openFolder} />
            ) : (
              <EmptyState title="The report is empty" />
            )
          ) : null}
        </>
      )}
    </Stack>
  );
}

// ---- deletion ----

/** Delete a file or folder by absolute path, after a confirmation repeating it (exported for its test). */
export function DeleteForm({ deviceId }: { deviceId: number }) {
  const [kind, setKind] = useState<'file' | 'folder'>('file');
  const [path, setPath] = useState('');
  const [confirming, setConfirming] = useState(false);
  const problem = path === '' ? null : pathProblem(path);
  const remove = useMutation({
    mutationFn: () => deletePath(deviceId, kind, path),
    onSettled: () => setConfirming(false),
  });
  return (
    <Stack gap="xs">
      <Title order={3}>Delete a file or folder</Title>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (path && !pathProblem(path)) {
            remove.reset();
            setConfirming(true);
          }
        }}
      >
        <Group align="flex-start" gap="xs">
          <SegmentedControl
            data={[
              { value: 'file', label: 'File' },
              { value: 'folder', label: 'Folder' },
            ]}
            value={kind}
            onChange={(v) => setKind(v as 'file' | 'folder')}
            aria-label="What to delete"
          />
          <TextInput
            aria-label="Absolute path to delete"
            placeholder="/tmp/old.log or C:\Temp\old.log"
            value={path}
            onChange={(e) => setPath(e.currentTarget.value)}
            error={problem}
            classNames={{ input: 'console-mono' }}
            w={360}
          />
          <Button type="submit" color="red" variant="light" disabled={!path || !!problem}>
            Delete…
          </Button>
        </Group>
      </form>
      {remove.isError ? <ErrorNotice error={remove.error} title="Not deleted" /> : null}
      {remove.isSuccess ? (
        <Alert color="teal" variant="light" data-testid="delete-done">
          {typeof remove.data.message === 'string' ? remove.data.message : 'Deleted.'}
        </Alert>
      ) : null}
      {confirming ? (
        <Modal opened onClose={() => setConfirming(false)} title={`Delete this ${kind}?`}>
          <Stack>
            <Code block data-testid="delete-path">
              {path}
            </Code>
            <Text size="sm">
              {kind === 'folder'
                ? 'The folder and everything in it are deleted on the host at once.'
                : 'The file is deleted on the host at once.'}{' '}
              <b>This is permanent: there is no recycle bin and no undo.</b>
            </Text>
            <Group justify="flex-end">
              <Button variant="default" onClick={() => setConfirming(false)}>
                Cancel
              </Button>
              <Button
                color="red"
                loading={remove.isPending}
                onClick={() => remove.mutate()}
                data-testid="confirm-delete"
              >
                Delete permanently
              </Button>
            </Group>
          </Stack>
        </Modal>
      ) : null}
    </Stack>
  );
}

export function DeviceAgentPanel({ deviceId }: { deviceId: number }) {
  const caller = useCaller();
  const [section, setSection] = useState<string | null>('processes');
  return (
    <Paper withBorder p="sm" data-testid="agent-panel">
      <Tabs value={section} onChange={setSection} keepMounted={false} variant="pills">
        <Tabs.List mb="sm">
          <Tabs.Tab value="processes">Processes</Tabs.Tab>
          <Tabs.Tab value="services">Services</Tabs.Tab>
          <Tabs.Tab value="disk">Disk usage</Tabs.Tab>
          {caller.can('agentadmin') ? <Tabs.Tab value="delete">Delete files</Tabs.Tab> : null}
        </Tabs.List>
        <Tabs.Panel value="processes">
          <ProcessesSection deviceId={deviceId} />
        </Tabs.Panel>
        <Tabs.Panel value="services">
          <ServicesSection deviceId={deviceId} />
        </Tabs.Panel>
        <Tabs.Panel value="disk">
          <DiskSection deviceId={deviceId} />
        </Tabs.Panel>
        {caller.can('agentadmin') ? (
          <Tabs.Panel value="delete">
            <DeleteForm deviceId={deviceId} />
          </Tabs.Panel>
        ) : null}
      </Tabs>
    </Paper>
  );
}
