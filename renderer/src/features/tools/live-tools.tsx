/**
 * Ping and MTR rendered live from their event streams: rows appear as frames arrive, a Stop button
 * aborts the stream (and with it the appliance's process).
 */
import { Alert, Badge, Button, Group, Paper, Table, Text, TextInput } from '@mantine/core';
import { useCallback, useEffect, useRef, useState } from 'react';

import { Sparkline } from '../../components/charts/sparkline.js';
import { TimeSeriesChart } from '../../components/charts/time-series-chart.js';
import { errorText } from '../../components/ui/feedback.js';
import { openEventStream } from '../../lib/event-stream.js';
import { formatMs, formatPercent } from '../../lib/format.js';
import { applyFrame, lossOf, sortedHops, type HopStats, type MtrFrame } from './mtr-model.js';

type RunState = 'idle' | 'running' | 'done' | 'stopped' | 'failed';

function useStream() {
  const controller = useRef<AbortController | null>(null);
  const [state, setState] = useState<RunState>('idle');
  const [error, setError] = useState<string | null>(null);
  const stop = useCallback(() => {
    controller.current?.abort();
    controller.current = null;
    setState((s) => (s === 'running' ? 'stopped' : s));
  }, []);
  useEffect(() => () => controller.current?.abort(), []);
  const run = useCallback(async (path: string, onEvent: (event: string, data: unknown) => void) => {
    controller.current?.abort();
    const c = new AbortController();
    controller.current = c;
    setError(null);
    setState('running');
    try {
      for await (const ev of openEventStream(path, c.signal)) {
        let data: unknown = ev.data;
        try {
          data = JSON.parse(ev.data);
        } catch {
          // a non-JSON frame is shown as text
        }
        if (ev.event === 'error') {
          setError(
            typeof data === 'object' && data && 'message' in data
              ? String(data.message)
              : String(data),
          );
          continue;
        }
        onEvent(ev.event, data);
      }
      if (!c.signal.aborted) setState((s) => (s === 'running' ? 'done' : s));
    } catch (err) {
      setError(errorText(err));
      setState('failed');
    } finally {
      if (controller.current === c) controller.current = null;
    }
  }, []);
  return { state, error, run, stop, setError };
}

function TargetBar({
  target,
  setTarget,
  running,
  onRun,
  onStop,
  label,
}: {
  target: string;
  setTarget: (t: string) => void;
  running: boolean;
  onRun: () => void;
  onStop: () => void;
  label: string;
}) {
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (!running && target.trim()) onRun();
      }}
    >
      <Group gap="xs" mb="sm">
        <TextInput
          aria-label={`${label} target`}
          placeholder="Host name or IP address"
          value={target}
          onChange={(e) => setTarget(e.currentTarget.value)}
          w={280}
          className="console-mono"
        />
        {running ? (
          <Button color="red" onClick={onStop} data-testid="stop">
            Stop
          </Button>
        ) : (
          <Button type="submit" disabled={!target.trim()} data-testid="run">
            Run {label}
          </Button>
        )}
      </Group>
    </form>
  );
}

const STATE_BADGE: Record<RunState, [string, string]> = {
  idle: ['gray', 'ready'],
  running: ['blue', 'running'],
  done: ['teal', 'finished'],
  stopped: ['yellow', 'stopped'],
  failed: ['red', 'failed'],
};

function StateBadge({ state }: { state: RunState }) {
  const [color, text] = STATE_BADGE[state];
  return (
    <Badge color={color} data-testid="run-state">
      {text}
    </Badge>
  );
}

interface PingReply {
  icmp_seq: number;
  latency: number | null;
  at: number;
}
interface PingSummary {
  total_transmitted: number;
  total_received: number;
  packet_loss: number | string;
}

export function PingTool({ initialTarget, autoRun }: { initialTarget: string; autoRun: boolean }) {
  const [target, setTarget] = useState(initialTarget);
  const [replies, setReplies] = useState<PingReply[]>([]);
  const [summary, setSummary] = useState<PingSummary | null>(null);
  const stream = useStream();
  const start = useCallback(
    (host: string) => {
      setReplies([]);
      setSummary(null);
      void stream.run(`/api/SSEgetPingInfo/${encodeURIComponent(host.trim())}`, (_event, data) => {
        const frame = data as {
          icmp_seq?: number;
          latency?: number | null;
          summary?: PingSummary | null;
        };
        if (frame.summary) setSummary(frame.summary);
        else if (typeof frame.icmp_seq === 'number')
          setReplies((r) => [
            ...r,
            { icmp_seq: frame.icmp_seq!, latency: frame.latency ?? null, at: Date.now() },
          ]);
      });
    },
    [stream],
  );
  const started = useRef(false);
  useEffect(() => {
    if (autoRun && initialTarget && !started.current) {
      started.current = true;
      start(initialTarget);
    }
  }, [autoRun, initialTarget, start]);
  return (
    <Paper withBorder p="sm">
      <TargetBar
        label="ping"
        target={target}
        setTarget={setTarget}
        running={stream.state === 'running'}
        onRun={() => start(target)}
        onStop={stream.stop}
      />
      <Group gap="sm" mb="xs">
        <StateBadge state={stream.state} />
        <Text size="sm" c="dimmed">
          {replies.length} of 10 probes
          {summary
            ? ` · sent ${summary.total_transmitted}, received ${summary.total_received}, loss ${String(summary.packet_loss)}${typeof summary.packet_loss === 'number' ? '%' : ''}`
            : ''}
        </Text>
      </Group>
      {stream.error ? (
        <Alert color="red" variant="light" mb="xs" role="alert">
          {stream.error}
        </Alert>
      ) : null}
      {replies.length > 1 ? (
        <TimeSeriesChart
          label="Ping latency"
          height={140}
          data={replies.map((r) => ({ t: r.at, latency: r.latency }))}
          series={[{ key: 'latency', label: 'Latency', color: '#339af0' }]}
          format={(v) => formatMs(v)}
        />
      ) : null}
      <Table data-testid="ping-rows" mt="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={80}>Seq</Table.Th>
            <Table.Th>Latency</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {replies.map((r) => (
            <Table.Tr key={r.icmp_seq} data-testid="ping-row">
              <Table.Td>{r.icmp_seq}</Table.Td>
              <Table.Td>{r.latency === null ? 'no reply' : formatMs(r.latency)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Paper>
  );
}

export function MtrTool({ initialTarget, autoRun }: { initialTarget: string; autoRun: boolean }) {
  const [target, setTarget] = useState(initialTarget);
  const [hops, setHops] = useState<Map<number, HopStats>>(new Map());
  const stream = useStream();
  const start = useCallback(
    (host: string) => {
      setHops(new Map());
      void stream.run(`/api/SSEgetMTRInfo/${encodeURIComponent(host.trim())}`, (event, data) => {
        if (event === 'stream-complete') return;
        const frame = data as MtrFrame;
        if (frame && typeof frame.hop === 'number') setHops((h) => applyFrame(h, frame));
      });
    },
    [stream],
  );
  const started = useRef(false);
  useEffect(() => {
    if (autoRun && initialTarget && !started.current) {
      started.current = true;
      start(initialTarget);
    }
  }, [autoRun, initialTarget, start]);
  const rows = sortedHops(hops);
  const worst = Math.max(1, ...rows.map((h) => h.worst ?? 0));
  return (
    <Paper withBorder p="sm">
      <TargetBar
        label="MTR"
        target={target}
        setTarget={setTarget}
        running={stream.state === 'running'}
        onRun={() => start(target)}
        onStop={stream.stop}
      />
      <Group gap="sm" mb="xs">
        <StateBadge state={stream.state} />
        <Text size="sm" c="dimmed">
          10 cycles, numeric hops. Loss at a middle hop that does not carry on to later hops is
          usually a router deprioritising replies to probes, not a fault.
        </Text>
      </Group>
      {stream.error ? (
        <Alert color="red" variant="light" mb="xs" role="alert">
          {stream.error}
        </Alert>
      ) : null}
      <Table data-testid="mtr-hops">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={44}>Hop</Table.Th>
            <Table.Th>Host</Table.Th>
            <Table.Th>Loss</Table.Th>
            <Table.Th>Sent</Table.Th>
            <Table.Th>Last</Table.Th>
            <Table.Th>Avg</Table.Th>
            <Table.Th>Best</Table.Th>
            <Table.Th>Worst</Table.Th>
            <Table.Th w={180}>Replies</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((h) => (
            <Table.Tr key={h.hop} data-testid="mtr-hop">
              <Table.Td>{h.hop}</Table.Td>
              <Table.Td className="console-mono">{h.hosts.join(', ') || '???'}</Table.Td>
              <Table.Td c={lossOf(h) > 0 ? 'red' : undefined}>{formatPercent(lossOf(h))}</Table.Td>
              <Table.Td>{h.sent}</Table.Td>
              <Table.Td>{formatMs(h.last)}</Table.Td>
              <Table.Td>{formatMs(h.avg)}</Table.Td>
              <Table.Td>{formatMs(h.best)}</Table.Td>
              <Table.Td>{formatMs(h.worst)}</Table.Td>
              <Table.Td>
                <Sparkline values={h.samples} max={worst} label={`Replies of hop ${h.hop}`} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Paper>
  );
}
