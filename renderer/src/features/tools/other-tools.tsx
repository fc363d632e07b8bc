/** Traceroute with MTU, port scan with service names, iperf3, speed test with history, whois and GeoIP. */
import {
  ActionIcon,
  Alert,
  Button,
  Checkbox,
  Code,
  Group,
  NumberInput,
  Paper,
  ScrollArea,
  SegmentedControl,
  Select,
  SimpleGrid,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';

import { EmptyState, errorText } from '../../components/ui/feedback.js';
import { api } from '../../lib/api-client.js';
import { useCaller } from '../../lib/caller.js';
import { formatBits, formatMs, formatTime } from '../../lib/format.js';
import { keys } from '../../lib/query-keys.js';

function Failure({ error }: { error: unknown }) {
  return error ? (
    <Alert color="red" variant="light" mt="xs" role="alert">
      {errorText(error)}
    </Alert>
  ) : null;
}

function useAutoRun(autoRun: boolean, target: string, run: () => void) {
  const done = useRef(false);
  useEffect(() => {
    if (autoRun && target && !done.current) {
      done.current = true;
      run();
    }
  }, [autoRun, target, run]);
}

function ToolForm({
  children,
  onSubmit,
  busy,
  label,
  busyText,
}: {
  children: ReactNode;
  onSubmit: () => void;
  busy: boolean;
  label: string;
  busyText?: string;
}) {
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy) onSubmit();
      }}
    >
      <Group gap="xs" align="end" mb="sm">
        {children}
        <Button type="submit" loading={busy} data-testid="run">
          {label}
        </Button>
        {busy && busyText ? (
          <Text size="sm" c="dimmed">
            {busyText}
          </Text>
        ) : null}
      </Group>
    </form>
  );
}

interface TraceHop {
  hop: number;
  address: string;
  latency: number | null;
  hostname: string;
  mtu: number | null;
}

export function TracerouteTool({
  initialTarget,
  autoRun,
}: {
  initialTarget: string;
  autoRun: boolean;
}) {
  const [target, setTarget] = useState(initialTarget);
  const run = useMutation({
    mutationFn: (host: string) =>
      api.post<{ message: TraceHop[] }>(
        `/api/getTracerouteInfo/${encodeURIComponent(host.trim())}`,
      ),
  });
  useAutoRun(autoRun, initialTarget, () => run.mutate(initialTarget));
  const hops = run.data?.message ?? [];
  const pathMtu = hops.reduce<number | null>(
    (m, h) => (h.mtu === null ? m : m === null ? h.mtu : Math.min(m, h.mtu)),
    null,
  );
  return (
    <Paper withBorder p="sm">
      <ToolForm
        onSubmit={() => run.mutate(target)}
        busy={run.isPending}
        label="Trace"
        busyText="Tracing up to 10 hops…"
      >
        <TextInput
          aria-label="Traceroute target"
          placeholder="Host name or IP address"
          className="console-mono"
          w={280}
          value={target}
          onChange={(e) => setTarget(e.currentTarget.value)}
        />
      </ToolForm>
      <Failure error={run.error} />
      {hops.length ? (
        <>
          <Text size="sm" mb={4}>
            Path MTU: {pathMtu ?? 'unknown'}
          </Text>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Hop</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>Host name</Table.Th>
                <Table.Th>Latency</Table.Th>
                <Table.Th>MTU</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {hops.map((h) => (
                <Table.Tr key={h.hop}>
                  <Table.Td>{h.hop}</Table.Td>
                  <Table.Td className="console-mono">{h.address}</Table.Td>
                  <Table.Td>{h.hostname}</Table.Td>
                  <Table.Td>{formatMs(h.latency)}</Table.Td>
                  <Table.Td>{h.mtu ?? '–'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </>
      ) : null}
    </Paper>
  );
}

/** Open ports from nmap's normal output ("22/tcp open ssh"). */
export function openPorts(
  output: string,
): { port: number; proto: string; state: string; service: string }[] {
  const rows: { port: number; proto: string; state: string; service: string }[] = [];
  for (const line of output.split('\n')) {
    const m = /^(\d+)\/(tcp|udp)\s+(\S+)\s*(.*)$/.exec(line.trim());
    if (m)
      rows.push({ port: Number(m[1]), proto: m[2]!, state: m[3]!, service: (m[4] ?? '').trim() });
  }
  return rows;
}

export function PortScanTool({
  initialTarget,
  autoRun,
}: {
  initialTarget: string;
  autoRun: boolean;
}) {
  const [ip, setIp] = useState(initialTarget);
  const [portlist, setPortlist] = useState('22,80,443,161,3389,8000-8100');
  const [timing, setTiming] = useState('4');
  const [service, setService] = useState(false);
  const names = useQuery({
    queryKey: keys.tools.portServices,
    queryFn: () => api.get<{ services: Record<string, string> }>('/api/getPortServiceNames'),
    select: (a) => a.services,
    staleTime: 10 * 60_000,
  });
  const run = useMutation({
    mutationFn: () =>
      api.post<{ message: string }>('/api/getPortscanInfo', {
        ip: ip.trim(),
        portlist,
        timing,
        service,
      }),
  });
  useAutoRun(autoRun, initialTarget, () => run.mutate());
  const output = run.data?.message ?? '';
  const ports = openPorts(output);
  return (
    <Paper withBorder p="sm">
      <ToolForm
        onSubmit={() => run.mutate()}
        busy={run.isPending}
        label="Scan"
        busyText="Scanning…"
      >
        <TextInput
          label="IP address"
          className="console-mono"
          w={180}
          value={ip}
          onChange={(e) => setIp(e.currentTarget.value)}
        />
        <TextInput
          label="Ports"
          w={220}
          value={portlist}
          onChange={(e) => setPortlist(e.currentTarget.value)}
        />
        <Select
          label="Timing"
          w={90}
          value={timing}
          onChange={(v) => setTiming(v ?? '4')}
          data={['3', '4', '5']}
          allowDeselect={false}
        />
        <Checkbox
          mb={6}
          label="Detect versions"
          checked={service}
          onChange={(e) => setService(e.currentTarget.checked)}
        />
      </ToolForm>
      <Failure error={run.error} />
      {ports.length ? (
        <Table mb="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Port</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Scanner says</Table.Th>
              <Table.Th>Known as</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {ports.map((p) => (
              <Table.Tr key={`${p.port}/${p.proto}`}>
                <Table.Td className="console-mono">
                  {p.port}/{p.proto}
                </Table.Td>
                <Table.Td c={p.state === 'open' ? 'teal' : undefined}>{p.state}</Table.Td>
                <Table.Td>{p.service}</Table.Td>
                <Table.Td>{names.data?.[String(p.port)] ?? ''}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
      {output ? (
        <ScrollArea.Autosize mah={300}>
          <Code block>{output}</Code>
        </ScrollArea.Autosize>
      ) : null}
    </Paper>
  );
}

/** Any decoded value as text (objects as JSON): rendered as text, never markup. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function ResultTable({ value }: { value: unknown }) {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return <Code block>{textOf(value)}</Code>;
  return (
    <Table>
      <Table.Tbody>
        {Object.entries(value as Record<string, unknown>).map(([k, v]) => (
          <Table.Tr key={k}>
            <Table.Td w={200} fw={600}>
              {k}
            </Table.Td>
            <Table.Td className="console-mono">{textOf(v)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function IperfTool({ initialTarget, autoRun }: { initialTarget: string; autoRun: boolean }) {
  const queryClient = useQueryClient();
  const caller = useCaller();
  const [host, setHost] = useState(initialTarget);
  const [port, setPort] = useState<number | string>(5201);
  const [duration, setDuration] = useState<number | string>(10);
  const [protocol, setProtocol] = useState('tcp');
  const [direction, setDirection] = useState('download');
  const server = useQuery({
    queryKey: keys.tools.iperfServer,
    queryFn: () =>
      api.get<{ active: boolean; state: string; port: number; connectHost: string }>(
        '/api/iperf/server/status',
      ),
    refetchInterval: 15_000,
  });
  const toggle = useMutation({
    mutationFn: (start: boolean) => api.post(`/api/iperf/server/${start ? 'start' : 'stop'}`),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.tools.iperfServer }),
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  const run = useMutation({
    mutationFn: () =>
      api.post<{ message: unknown }>('/api/iperf/client/run', {
        host: host.trim(),
        port: Number(port),
        duration: Number(duration),
        protocol,
        direction,
      }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.tools.speedHistory }),
  });
  useAutoRun(autoRun, initialTarget, () => run.mutate());
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="sm">
      <Paper withBorder p="sm">
        <Title order={2} mb="xs">
          Client
        </Title>
        <ToolForm
          onSubmit={() => run.mutate()}
          busy={run.isPending}
          label="Run"
          busyText={`Measuring for ${String(duration)} s…`}
        >
          <TextInput
            label="Server"
            className="console-mono"
            w={170}
            value={host}
            onChange={(e) => setHost(e.currentTarget.value)}
          />
          <NumberInput label="Port" w={80} min={1} max={65535} value={port} onChange={setPort} />
          <NumberInput
            label="Seconds"
            w={80}
            min={1}
            max={60}
            value={duration}
            onChange={setDuration}
          />
        </ToolForm>
        <Group gap="xs" mb="xs">
          <SegmentedControl
            aria-label="Protocol"
            value={protocol}
            onChange={setProtocol}
            data={['tcp', 'udp']}
          />
          <SegmentedControl
            aria-label="Direction"
            value={direction}
            onChange={setDirection}
            data={['download', 'upload']}
          />
        </Group>
        <Failure error={run.error} />
        {run.data ? <ResultTable value={run.data.message} /> : null}
      </Paper>
      <Paper withBorder p="sm">
        <Title order={2} mb="xs">
          Server on this appliance
        </Title>
        <Text size="sm" mb="xs">
          {server.data
            ? server.data.active
              ? `Listening on ${server.data.connectHost}:${server.data.port} (no authentication, no firewall: stop it when done).`
              : `Stopped (${server.data.state}).`
            : server.isError
              ? errorText(server.error)
              : '…'}
        </Text>
        {caller.can('tools') ? (
          <Button
            color={server.data?.active ? 'red' : undefined}
            loading={toggle.isPending}
            onClick={() => toggle.mutate(!server.data?.active)}
          >
            {server.data?.active ? 'Stop server' : 'Start server'}
          </Button>
        ) : null}
      </Paper>
    </SimpleGrid>
  );
}

interface HistoryRow {
  id: number;
  timestamp: string | number;
  kind: string;
  target: string | null;
  result: Record<string, unknown> | null;
}

function speedOf(result: Record<string, unknown> | null, key: string): string {
  const v = result?.[key];
  return typeof v === 'number' ? formatBits(v) : v === undefined || v === null ? '–' : textOf(v);
}

export function SpeedTestTool() {
  const queryClient = useQueryClient();
  const history = useQuery({
    queryKey: keys.tools.speedHistory,
    queryFn: () => api.get<{ data: HistoryRow[] }>('/api/getSpeedTestHistory'),
    select: (a) => a.data,
  });
  const run = useMutation({
    mutationFn: () => api.post<{ message: unknown }>('/api/getSpeedTestInfo'),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.tools.speedHistory }),
  });
  const remove = useMutation({
    mutationFn: (id: number) => api.delete(`/api/speedtest-history/${id}`),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.tools.speedHistory }),
    onError: (err) => notifications.show({ color: 'red', message: errorText(err) }),
  });
  return (
    <Paper withBorder p="sm">
      <Group mb="sm">
        <Button onClick={() => run.mutate()} loading={run.isPending} data-testid="run">
          Run speed test
        </Button>
        {run.isPending ? (
          <Text size="sm" c="dimmed">
            Downloading and uploading test data…
          </Text>
        ) : null}
      </Group>
      <Failure error={run.error} />
      {run.data ? <ResultTable value={run.data.message} /> : null}
      <Title order={2} mt="md" mb={4}>
        History (twelve weeks)
      </Title>
      {history.data?.length ? (
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>When</Table.Th>
              <Table.Th>Kind</Table.Th>
              <Table.Th>Target</Table.Th>
              <Table.Th>Download</Table.Th>
              <Table.Th>Upload</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {history.data.map((row) => (
              <Table.Tr key={row.id}>
                <Table.Td>{formatTime(row.timestamp)}</Table.Td>
                <Table.Td>{row.kind}</Table.Td>
                <Table.Td className="console-mono">{row.target ?? ''}</Table.Td>
                <Table.Td>{speedOf(row.result, 'download')}</Table.Td>
                <Table.Td>{speedOf(row.result, 'upload')}</Table.Td>
                <Table.Td w={30}>
                  <ActionIcon
                    color="red"
                    aria-label={`Delete result ${row.id}`}
                    onClick={() => remove.mutate(row.id)}
                  >
                    ✕
                  </ActionIcon>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : (
        <EmptyState title="No results yet">
          Run a speed test or an iperf3 client to start the history.
        </EmptyState>
      )}
    </Paper>
  );
}

export function LookupTool({
  initialTarget,
  autoRun,
  kind,
}: {
  initialTarget: string;
  autoRun: boolean;
  kind: 'whois' | 'geoip';
}) {
  const [ip, setIp] = useState(initialTarget);
  const run = useMutation({
    mutationFn: (address: string) =>
      api.get<{ message: Record<string, unknown> }>(
        `/api/tools/${kind}/${encodeURIComponent(address.trim())}`,
      ),
  });
  useAutoRun(autoRun, initialTarget, () => run.mutate(initialTarget));
  return (
    <Paper withBorder p="sm">
      <ToolForm
        onSubmit={() => run.mutate(ip)}
        busy={run.isPending}
        label={kind === 'whois' ? 'Whois' : 'Locate'}
      >
        <TextInput
          aria-label="IP address"
          placeholder="IP address"
          className="console-mono"
          w={220}
          value={ip}
          onChange={(e) => setIp(e.currentTarget.value)}
        />
      </ToolForm>
      <Failure error={run.error} />
      {run.data ? <ResultTable value={run.data.message} /> : null}
    </Paper>
  );
}
