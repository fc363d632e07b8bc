/**
 * What the flow pages share (spec part 3, Flow explorer): the tabs between the flow list, the
 * aggregated list and top talkers; the filter form (filters live in the URL as `?filters=<json>`,
 * so a view can be shared and reloaded); the saved-exclusions panel (the logs' panel on
 * `/api/netflow/filters`: one set for both lists and the top talkers); endpoint cells; the
 * permission gate (`vne`). Every address and host name is rendered as text.
 */
import { Button, Group, Select, TextInput } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, useLocation, useSearchParams } from 'react-router';

import { EmptyState, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller } from '../../lib/caller.js';
import { filtersFromParam } from '../logs/log-model.js';
import { SavedFiltersPanel } from '../logs/saved-filters-panel.js';
import {
  buildFlowFilters,
  FLOW_KEY_LABELS,
  flowFormOf,
  INTEGER_KEYS,
  PRIMARY_KEYS,
  SAVED_KEYS,
  type FlowFilters,
} from './flow-model.js';
import { flowKeys } from './flows-api.js';
import './flows.css';

export const FLOW_TABS = [
  { path: '/flows', label: 'Flows' },
  { path: '/flows/aggregated', label: 'Conversations' },
  { path: '/flows/top', label: 'Top talkers' },
] as const;

/** The flow views as links (each keeps the current filters: the three pages take the same keys). */
export function FlowTabs() {
  const location = useLocation();
  const [params] = useSearchParams();
  const filters = params.get('filters');
  const qs = filters ? `?${new URLSearchParams({ filters }).toString()}` : '';
  return (
    <nav aria-label="Flow views">
      <Group gap={4}>
        {FLOW_TABS.map((t) => {
          const current = location.pathname === t.path;
          return (
            <Button
              key={t.path}
              component={Link}
              to={`${t.path}${qs}`}
              size="compact-sm"
              variant={current ? 'light' : 'subtle'}
              aria-current={current ? 'page' : undefined}
            >
              {t.label}
            </Button>
          );
        })}
      </Group>
    </nav>
  );
}

/** The page's filters from its URL, and a setter that resets the page number. */
export function useFlowView() {
  const [params, setParams] = useSearchParams();
  const filters = filtersFromParam(params.get('filters'));
  const page = Math.max(1, Number(params.get('page')) || 1);
  const set = (changes: Record<string, string | null>) => {
    const p = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes))
      if (value === null || value === '') p.delete(key);
      else p.set(key, value);
    if (!('page' in changes)) p.delete('page');
    setParams(p);
  };
  const setFilters = (f: FlowFilters) =>
    set({ filters: Object.keys(f).length ? JSON.stringify(f) : null });
  return { params, filters, page, set, setFilters };
}

/** The filters as JSON with sorted keys, so two spellings of one filter set compare equal. */
const canonical = (filters: FlowFilters) =>
  JSON.stringify(
    Object.fromEntries(Object.entries(filters).sort(([a], [b]) => a.localeCompare(b))),
  );

export function FlowFilterForm({
  keys,
  applied,
  onApply,
}: {
  keys: readonly string[];
  applied: FlowFilters;
  onApply: (filters: FlowFilters) => void;
}) {
  const [values, setValues] = useState<Record<string, string>>(() => flowFormOf(keys, applied));
  const [extra, setExtra] = useState<string[]>([]);
  const appliedText = canonical(applied);
  const sent = useRef<string | null>(null);
  // A change from outside (a bar, a link, a reload) shows in the form.
  useEffect(() => {
    if (sent.current === appliedText) return;
    sent.current = null;
    setValues(flowFormOf(keys, JSON.parse(appliedText) as FlowFilters));
  }, [keys, appliedText]);
  const send = (filters: FlowFilters) => {
    sent.current = canonical(filters);
    onApply(filters);
  };
  const shown = keys.filter(
    (k) => PRIMARY_KEYS.includes(k) || values[k] !== undefined || extra.includes(k),
  );
  const hidden = keys.filter((k) => !shown.includes(k));
  return (
    <form
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        send(buildFlowFilters(keys, values));
      }}
    >
      <Group align="flex-end" gap="xs" wrap="wrap">
        {shown.map((key) => (
          <TextInput
            key={key}
            label={FLOW_KEY_LABELS[key] ?? key}
            value={values[key] ?? ''}
            onChange={(e) => setValues({ ...values, [key]: e.currentTarget.value })}
            w={key.endsWith('ip') || key === 'flow_src' ? 190 : 130}
            placeholder={key === 'protocol' ? 'tcp, udp, 47…' : undefined}
            // The value is monospace (addresses and numbers line up), the label is not.
            classNames={
              INTEGER_KEYS.includes(key) || key.endsWith('ip') || key === 'flow_src'
                ? { input: 'console-mono' }
                : undefined
            }
            data-testid={`filter-${key}`}
          />
        ))}
        {hidden.length ? (
          <Select
            label="More filters"
            placeholder="Add a filter…"
            data={hidden.map((k) => ({ value: k, label: FLOW_KEY_LABELS[k] ?? k }))}
            value={null}
            onChange={(k) => {
              if (k) setExtra([...extra, k]);
            }}
            w={190}
            data-testid="more-filters"
          />
        ) : null}
        <Button type="submit" data-testid="apply-filters">
          Apply
        </Button>
        <Button
          variant="default"
          onClick={() => {
            setValues({});
            setExtra([]);
            send({});
          }}
        >
          Clear
        </Button>
      </Group>
    </form>
  );
}

/** The saved exclusions of the flow lists (feed `netflow`); a change reloads every flow query. */
export function FlowExclusions({ current }: { current: FlowFilters }) {
  const queryClient = useQueryClient();
  return (
    <SavedFiltersPanel
      feed={{ id: 'netflow', savedKeys: SAVED_KEYS }}
      current={current}
      onChange={() => void queryClient.invalidateQueries({ queryKey: flowKeys.all })}
      hint="Personal exclusions: an enabled one hides the flows it matches from your flow list, conversations and top talkers, never from anyone else’s, and never deletes anything."
    />
  );
}

/** One end of a flow: the device's link when the appliance knows it, else the address. */
export function Endpoint({
  ip,
  port,
  id,
  host,
}: {
  ip: string;
  port?: number | null;
  id: number | null;
  host: string | null;
}) {
  const seesDevices = useCaller().canAny('devices', 'overwatch');
  return (
    <span title={host ? `${host} (${ip})` : ip}>
      {id !== null && id !== undefined && seesDevices ? (
        <Link to={`/devices/${id}`} className="console-row-link">
          {host ?? ip}
        </Link>
      ) : (
        <span className="console-mono">{host ?? ip}</span>
      )}
      {port !== null && port !== undefined ? (
        <span className="console-cell-dimmed">:{port}</span>
      ) : null}
    </span>
  );
}

/** The `vne` gate: the page's body, or why it is not shown. */
export function FlowGate({ title, children }: { title: string; children: ReactNode }) {
  const caller = useCaller();
  if (caller.loading) return <RowsSkeleton />;
  if (!caller.can('vne'))
    return (
      <>
        <PageHeader title={title} />
        <EmptyState title="The flow explorer permission is needed">
          Ask an administrator for the vne permission to see NetFlow and IPFIX flows.
        </EmptyState>
      </>
    );
  return <>{children}</>;
}
