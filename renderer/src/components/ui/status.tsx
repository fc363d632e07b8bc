import { Badge, Tooltip, useComputedColorScheme } from '@mantine/core';

import { formatMs } from '../../lib/format.js';

export type Reachability = 'up' | 'down' | 'unknown';

export function reachabilityOf(latency: number | null | undefined): Reachability {
  if (latency === null || latency === undefined) return 'unknown';
  return latency < 0 ? 'down' : 'up';
}

const COLORS: Record<Reachability, string> = { up: 'teal', down: 'red', unknown: 'gray' };
const LABELS: Record<Reachability, string> = { up: 'Up', down: 'Down', unknown: 'No probe' };

/** `tooltip: false` where the latency is shown beside it anyway (dense tables: one floating element less per row). */
export function StatusBadge({
  latency,
  tooltip = true,
}: {
  latency: number | null | undefined;
  tooltip?: boolean;
}) {
  const state = reachabilityOf(latency);
  // Light tints fail 4.5:1 contrast on a white page: the light theme draws outlines instead.
  const light = useComputedColorScheme('dark') === 'light';
  const badge = (
    <Badge
      color={COLORS[state]}
      variant={state === 'down' ? 'filled' : light ? 'outline' : 'light'}
      miw={64}
    >
      {LABELS[state]}
    </Badge>
  );
  return state === 'up' && tooltip ? (
    <Tooltip label={`latency ${formatMs(latency)}`}>{badge}</Tooltip>
  ) : (
    badge
  );
}
