/**
 * One explorer for the three log feeds (syslog, Windows events, IDS events): they differ only in
 * columns, filter keys and severity scale (log-model.ts). The window is the console's shared one
 * (presets and a custom range); the appliance's echoed window is shown. Filters live in the URL
 * (`?filters=<json>&page=N`), so a view can be shared and reloaded. The severity summary is a bar
 * chart whose bars filter the list. Paging follows the appliance: `total` is exact up to a cap
 * (`total_capped`: a lower bound) and a request that ran out of time says `partial`.
 *
 * Every row's text is the device's: it is rendered as React text, never as markup.
 */
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  MultiSelect,
  Pagination,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
  useComputedColorScheme,
} from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';

import { EmptyState, ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { VirtualTable, type Column } from '../../components/ui/virtual-table.js';
import { WindowPicker } from '../../components/ui/window-picker.js';
import { useCaller } from '../../lib/caller.js';
import { devicesQuery } from '../../lib/devices-api.js';
import { formatTime } from '../../lib/format.js';
import { usePrefs, windowKey } from '../../lib/prefs.js';
import {
  FEEDS,
  KEY_LABELS,
  buildFilters,
  filtersFromParam,
  formOf,
  levelOf,
  pageCount,
  severityLabel,
  type FeedDef,
  type FeedId,
  type LogFilters,
} from './log-model.js';
import {
  logListQuery,
  sevSumQuery,
  type EventLogRow,
  type IdsRow,
  type LogRow,
  type SyslogRow,
} from './logs-api.js';
import { SavedFiltersPanel } from './saved-filters-panel.js';
import { SeverityChart } from './severity-chart.js';
import './logs.css';

const LIMITS = ['100', '500', '1000', '5000'];

type DeviceNames = Map<number, string>;

function SeverityBadge({ feed, value }: { feed: FeedDef; value: number }) {
  const level = levelOf(feed, value);
  // Light tints and warm outlines fail 4.5:1 contrast on a white page: the light theme fills
  // the badge in a pale shade (autoContrast then picks dark text).
  const light = useComputedColorScheme('dark') === 'light';
  return (
    <Badge
      size="xs"
      variant={light ? 'filled' : 'light'}
      autoContrast
      color={`${(level?.color ?? 'gray.6').split('.')[0]}${light ? '.3' : ''}`}
      radius="xs"
    >
      {severityLabel(feed, value)}
    </Badge>
  );
}

function DeviceCell({
  id,
  names,
  fallback,
}: {
  id: number | null;
  names: DeviceNames;
  fallback?: string | null;
}) {
  if (id === null || id === undefined)
    return <span className="console-cell-dimmed">{fallback ?? '–'}</span>;
  return (
    <Link
      to={`/devices/${id}`}
      className="console-row-link"
      title={names.get(id) ?? `Device ${id}`}
    >
      {names.get(id) ?? fallback ?? `Device ${id}`}
    </Link>
  );
}

function columnsOf(feed: FeedId, names: DeviceNames): Column<LogRow>[] {
  const def = FEEDS[feed];
  const time: Column<LogRow> = {
    id: 'timestamp',
    header: 'Time',
    size: 190,
    sortValue: (r) => r.timestamp,
    cell: (r) => <span className="console-mono">{formatTime(r.timestamp)}</span>,
  };
  const severity: Column<LogRow> = {
    id: 'severity',
    header: 'Severity',
    size: 100,
    sortValue: (r) => r.severity,
    cell: (r) => <SeverityBadge feed={def} value={r.severity} />,
  };
  if (feed === 'syslog')
    return [
      time,
      severity,
      {
        id: 'device',
        header: 'Device',
        size: 170,
        sortValue: (r) => (r as SyslogRow).device_id,
        cell: (r) => {
          const s = r as SyslogRow;
          return <DeviceCell id={s.device_id} names={names} fallback={s.sender ?? s.host} />;
        },
      },
      { id: 'facility', header: 'Facility', size: 70, sortValue: (r) => (r as SyslogRow).facility },
      { id: 'source', header: 'Source', size: 140, sortValue: (r) => (r as SyslogRow).source },
      {
        id: 'message',
        header: 'Message',
        size: 300,
        grow: true,
        sortValue: (r) => (r as SyslogRow).message,
        cell: (r) => <span title={(r as SyslogRow).message}>{(r as SyslogRow).message}</span>,
      },
    ];
  if (feed === 'eventlog')
    return [
      time,
      severity,
      {
        id: 'device',
        header: 'Device',
        size: 170,
        sortValue: (r) => (r as EventLogRow).device_id,
        cell: (r) => <DeviceCell id={(r as EventLogRow).device_id} names={names} />,
      },
      { id: 'log', header: 'Log', size: 110, sortValue: (r) => (r as EventLogRow).log },
      { id: 'event_id', header: 'Event', size: 70, sortValue: (r) => (r as EventLogRow).event_id },
      { id: 'source', header: 'Source', size: 160, sortValue: (r) => (r as EventLogRow).source },
      {
        id: 'data',
        header: 'Message',
        size: 300,
        grow: true,
        sortValue: (r) => (r as EventLogRow).data,
        cell: (r) => <span title={(r as EventLogRow).data ?? ''}>{(r as EventLogRow).data}</span>,
      },
    ];
  const endpoint = (ip: string, port: number | null, id: number | null, host: string | null) => (
    <span title={host ?? ip}>
      {id !== null && id !== undefined ? (
        <Link to={`/devices/${id}`} className="console-row-link">
          {names.get(id) ?? host ?? ip}
        </Link>
      ) : (
        <span className="console-mono">{ip}</span>
      )}
      {port !== null && port !== undefined ? (
        <span className="console-cell-dimmed">:{port}</span>
      ) : null}
    </span>
  );
  return [
    time,
    severity,
    {
      id: 'signature',
      header: 'Signature',
      size: 260,
      grow: true,
      sortValue: (r) => (r as IdsRow).signature ?? (r as IdsRow).signature_id,
      cell: (r) => {
        const e = r as IdsRow;
        return (
          <Link to={`/logs/ids/${e.id}`} className="console-row-link" title={e.signature ?? ''}>
            {e.signature || `Signature ${e.signature_id}`}
          </Link>
        );
      },
    },
    {
      id: 'src',
      header: 'Source',
      size: 180,
      sortValue: (r) => (r as IdsRow).src_ip,
      cell: (r) => {
        const e = r as IdsRow;
        return endpoint(e.src_ip, e.src_port, e.src_id, e.src_host);
      },
    },
    {
      id: 'dst',
      header: 'Destination',
      size: 180,
      sortValue: (r) => (r as IdsRow).dst_ip,
      cell: (r) => {
        const e = r as IdsRow;
        return endpoint(e.dst_ip, e.dst_port, e.dst_id, e.dst_host);
      },
    },
    { id: 'proto', header: 'Proto', size: 64, sortValue: (r) => (r as IdsRow).proto },
    { id: 'iface', header: 'Interface', size: 90, sortValue: (r) => (r as IdsRow).iface },
  ];
}

/** The filters as JSON with sorted keys, so two spellings of one filter set compare equal. */
function canonicalFilters(filters: LogFilters): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(filters).sort(([a], [b]) => a.localeCompare(b))),
  );
}

export function FilterForm({
  feed,
  applied,
  onApply,
}: {
  feed: FeedDef;
  applied: LogFilters;
  onApply: (filters: LogFilters) => void;
}) {
  const initial = formOf(feed, applied);
  const [values, setValues] = useState<Record<string, string>>(initial.values);
  const [severities, setSeverities] = useState<string[]>(initial.severities.map(String));
  const [extra, setExtra] = useState<string | null>(null);
  const appliedText = canonicalFilters(applied);
  // What this form itself last applied: when the URL catches up with it, the form keeps what the
  // user has typed since (pressing Clear and typing at once must not lose the typing).
  const sent = useRef<string | null>(null);
  // A change from outside (a severity bar, a reload) shows in the form.
  useEffect(() => {
    if (sent.current === appliedText) return;
    sent.current = null;
    const next = formOf(feed, JSON.parse(appliedText) as LogFilters);
    setValues(next.values);
    setSeverities(next.severities.map(String));
  }, [feed, appliedText]);
  const send = (filters: LogFilters) => {
    sent.current = canonicalFilters(filters);
    onApply(filters);
  };
  const [first, ...rest] = feed.filterKeys;
  const shown = rest.filter((k) => values[k] !== undefined || k === extra);
  const hidden = rest.filter((k) => !shown.includes(k));
  const apply = () =>
    send(
      buildFilters(
        feed,
        values,
        severities.map((s) => Number(s)),
      ),
    );
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
      aria-label="Filters"
    >
      <Group align="flex-end" gap="xs" wrap="wrap">
        <TextInput
          label={KEY_LABELS[first!]}
          value={values[first!] ?? ''}
          onChange={(e) => setValues({ ...values, [first!]: e.currentTarget.value })}
          w={260}
          data-testid={`filter-${first}`}
        />
        <MultiSelect
          label="Severity"
          data={feed.levels.map((l) => ({ value: String(l.value), label: l.label }))}
          value={severities}
          onChange={setSeverities}
          clearable
          w={260}
          placeholder={severities.length ? undefined : 'Any'}
          data-testid="filter-severity"
        />
        {shown.map((key) => (
          <TextInput
            key={key}
            label={KEY_LABELS[key] ?? key}
            value={values[key] ?? ''}
            onChange={(e) => setValues({ ...values, [key]: e.currentTarget.value })}
            w={170}
            className={
              feed.integerKeys.includes(key) || key.endsWith('ip') ? 'console-mono' : undefined
            }
            data-testid={`filter-${key}`}
          />
        ))}
        {hidden.length ? (
          <Select
            label="More filters"
            placeholder="Add a filter…"
            data={hidden.map((k) => ({ value: k, label: KEY_LABELS[k] ?? k }))}
            value={null}
            onChange={(k) => {
              if (k) {
                setExtra(k);
                setValues({ ...values, [k]: values[k] ?? '' });
              }
            }}
            w={190}
          />
        ) : null}
        <Button type="submit" data-testid="apply-filters">
          Apply
        </Button>
        <Button
          variant="default"
          onClick={() => {
            setValues({});
            setSeverities([]);
            setExtra(null);
            send({});
          }}
        >
          Clear
        </Button>
      </Group>
    </form>
  );
}

export function LogExplorer({ feedId }: { feedId: FeedId }) {
  const feed = FEEDS[feedId];
  const caller = useCaller();
  const allowed = caller.can('logs');
  const seesDevices = caller.canAny('devices', 'overwatch');
  const window = usePrefs((s) => s.window);
  const wKey = windowKey(window);
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const filters = useMemo(() => filtersFromParam(params.get('filters')), [params]);
  const page = Math.max(1, Number(params.get('page')) || 1);
  const limit = LIMITS.includes(params.get('limit') ?? '') ? Number(params.get('limit')) : 1000;
  const setView = (next: { filters?: LogFilters; page?: number; limit?: number }) => {
    const p = new URLSearchParams(params);
    const f = next.filters ?? filters;
    if (Object.keys(f).length) p.set('filters', JSON.stringify(f));
    else p.delete('filters');
    const pg = next.page ?? 1;
    if (pg > 1) p.set('page', String(pg));
    else p.delete('page');
    const lim = next.limit ?? limit;
    if (lim !== 1000) p.set('limit', String(lim));
    else p.delete('limit');
    setParams(p, { replace: false });
  };

  const list = useQuery({
    ...logListQuery(feedId, window, wKey, filters, limit, page),
    enabled: allowed,
    placeholderData: keepPreviousData,
  });
  const summary = useQuery({
    ...sevSumQuery(feedId, window, wKey, filters),
    enabled: allowed,
    placeholderData: keepPreviousData,
  });
  const devices = useQuery({ ...devicesQuery(), enabled: allowed && seesDevices });
  const names = useMemo<DeviceNames>(
    () => new Map((devices.data ?? []).map((d) => [d.id, d.label] as [number, string])),
    [devices.data],
  );
  const columns = useMemo(() => columnsOf(feedId, names), [feedId, names]);
  const severities = formOf(feed, filters).severities;

  if (caller.loading) return <RowsSkeleton />;
  if (!allowed)
    return (
      <>
        <PageHeader title={feed.title} />
        <EmptyState title="The logs permission is needed">
          Ask an administrator for the logs permission to read syslog, Windows and IDS events.
        </EmptyState>
      </>
    );

  const answer = list.data;
  const pages = answer
    ? pageCount(answer.total, limit, answer.total_capped, page, answer.data.length)
    : 1;
  const totalText = answer
    ? `${answer.total_capped ? 'at least ' : ''}${answer.total.toLocaleString()} ${
        answer.total === 1 ? 'row' : 'rows'
      }`
    : undefined;
  return (
    <Stack gap="sm">
      <PageHeader
        title={feed.title}
        subtitle={
          answer ? (
            <span data-testid="echoed-window">
              {formatTime(answer.startTime)} → {formatTime(answer.endTime)} · {totalText}
            </span>
          ) : undefined
        }
      >
        <WindowPicker />
      </PageHeader>
      <FilterForm feed={feed} applied={filters} onApply={(f) => setView({ filters: f })} />
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
        <Paper withBorder p="sm">
          <Group justify="space-between" mb={4}>
            <Title order={2}>By severity</Title>
            {summary.data?.partial ? (
              <Badge color="yellow" variant="light" title="The summary ran out of time">
                partial
              </Badge>
            ) : null}
          </Group>
          {summary.isError ? (
            <ErrorNotice error={summary.error} onRetry={() => void summary.refetch()} />
          ) : summary.isPending ? (
            <RowsSkeleton rows={4} height={12} />
          ) : (
            <SeverityChart
              feed={feed}
              counts={summary.data.severityCounts}
              selected={severities}
              onPick={(level) => {
                const names = feed.levels.find((l) => l.value === level)?.name ?? level;
                const next = { ...filters };
                if (severities.length === 1 && severities[0] === level) delete next.severity;
                else next.severity = names;
                setView({ filters: next });
              }}
            />
          )}
        </Paper>
        <SavedFiltersPanel feed={feed} current={filters} />
      </SimpleGrid>
      {list.isError ? (
        <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      ) : !answer ? (
        <RowsSkeleton rows={10} />
      ) : (
        <>
          {answer.partial ? (
            <Alert
              color="yellow"
              variant="light"
              data-testid="partial-notice"
              title="Partial answer"
            >
              The appliance ran out of time: these rows and the count cover the newest part of the
              window only. A narrower window or a more selective filter gives a complete answer.{' '}
              <Button
                size="compact-xs"
                variant="subtle"
                data-testid="partial-retry"
                loading={list.isFetching}
                onClick={() => void list.refetch()}
              >
                Retry
              </Button>
            </Alert>
          ) : null}
          {answer.data.length === 0 ? (
            <EmptyState title={`No ${feed.noun} in this window`}>
              {Object.keys(filters).length
                ? 'Nothing matches these filters. Clear them or widen the window.'
                : feedId === 'syslog'
                  ? 'Devices send syslog to the appliance’s syslog port (UDP or TCP); messages appear here as they arrive.'
                  : feedId === 'eventlog'
                    ? 'Windows events arrive through agents, for the event-log trackers set on a device’s page.'
                    : 'IDS alerts are read from Suricata’s eve.json when the appliance is given one.'}
            </EmptyState>
          ) : (
            <VirtualTable
              data={answer.data}
              columns={columns}
              height="calc(100vh - 420px)"
              label={`${feed.title} rows`}
              getRowId={(r) => String(r.id)}
              onOpen={feedId === 'eve' ? (r) => void navigate(`/logs/ids/${r.id}`) : undefined}
            />
          )}
          <Group justify="space-between">
            <Group gap="xs">
              <Text size="sm" c="dimmed" data-testid="row-count">
                {answer.data.length
                  ? `Rows ${((page - 1) * limit + 1).toLocaleString()}–${(
                      (page - 1) * limit +
                      answer.data.length
                    ).toLocaleString()} of ${totalText}`
                  : totalText}
              </Text>
              {answer.total_capped ? (
                <Text size="xs" c="dimmed">
                  (the appliance stops counting past its cap; the pages themselves are exact)
                </Text>
              ) : null}
              {list.isFetching ? (
                <Text size="xs" c="dimmed">
                  updating…
                </Text>
              ) : null}
            </Group>
            <Group gap="xs">
              <Select
                aria-label="Rows per page"
                data={LIMITS}
                value={String(limit)}
                onChange={(v) => v && setView({ limit: Number(v) })}
                w={90}
                allowDeselect={false}
              />
              <Pagination
                total={pages}
                value={page}
                onChange={(p) => setView({ page: p })}
                size="sm"
                getControlProps={(control) => ({ 'aria-label': `${control} page` })}
              />
            </Group>
          </Group>
        </>
      )}
      {feedId !== 'syslog' ? null : (
        <Text size="xs" c="dimmed">
          Syslog from an address no device holds shows its sender; set a device’s syslog access on{' '}
          {seesDevices ? (
            <Anchor component={Link} to="/devices" size="xs" underline="always">
              its page
            </Anchor>
          ) : (
            'its page'
          )}
          .
        </Text>
      )}
    </Stack>
  );
}
