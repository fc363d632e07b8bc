/**
 * A list of bars by bytes (top talkers, a device's partners): plain elements, as the logs'
 * severity chart; each bar is a link to the flow list filtered to it, on a square-root scale.
 */
import { Group, Paper, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

import { formatBytes } from '../../lib/format.js';
import { barWidths, flowListHref, type FlowFilters } from './flow-model.js';
import './flows.css';

export interface Bar {
  key: string;
  label: string;
  bytes: number;
  detail: string;
  /** The flow list's filters for this bar. */
  filters: FlowFilters;
}

export function BarList({ title, bars, testId }: { title: string; bars: Bar[]; testId: string }) {
  const widths = barWidths(bars.map((b) => b.bytes));
  return (
    <Paper withBorder p="sm" data-testid={testId}>
      <Title order={2} mb={4}>
        {title}
      </Title>
      {bars.length === 0 ? (
        <Text size="sm" c="dimmed">
          No flows in this window.
        </Text>
      ) : (
        <div role="list" aria-label={title}>
          {bars.map((b, i) => (
            <div role="listitem" key={b.key}>
              <Link
                to={flowListHref(b.filters, true)}
                className="console-flow-bar-row"
                title={`${b.label}: ${b.detail}. Show these flows`}
                data-bytes={b.bytes}
              >
                <Group gap={6} wrap="nowrap">
                  <Text size="xs" w="45%" ta="right" truncate className="console-mono">
                    {b.label}
                  </Text>
                  <div className="console-flow-bar-track">
                    <div className="console-flow-bar" style={{ width: `${widths[i]}%` }} />
                  </div>
                  <Text size="xs" w={70} className="console-mono">
                    {formatBytes(b.bytes)}
                  </Text>
                </Group>
              </Link>
            </div>
          ))}
        </div>
      )}
    </Paper>
  );
}
