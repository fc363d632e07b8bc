/**
 * The severity summary (`sevSum`) as a bar chart: one bar per level, its count as text beside it,
 * the bar's length on a square-root scale (one noisy level must not flatten the rest). Pressing a
 * bar filters the list to that level. Plain elements (no chart library: the bars are boxes).
 */
import { Group, Text, Tooltip, UnstyledButton } from '@mantine/core';

import type { FeedDef } from './log-model.js';

export function SeverityChart({
  feed,
  counts,
  selected,
  onPick,
}: {
  feed: FeedDef;
  counts: Record<string, number> | undefined;
  selected: number[];
  onPick?: (level: number) => void;
}) {
  const values = feed.chartLevels.map((level) => counts?.[String(level)] ?? 0);
  const max = Math.max(1, ...values);
  const total = values.reduce((a, b) => a + b, 0);
  return (
    <div
      role="group"
      aria-label={`${feed.title} by severity: ${total} in the window`}
      data-testid="severity-chart"
    >
      {feed.chartLevels.map((level, i) => {
        const def = feed.levels.find((l) => l.value === level);
        const count = values[i]!;
        const width = count === 0 ? 0 : Math.max(2, Math.sqrt(count / max) * 100);
        const active = selected.includes(level);
        return (
          <Tooltip key={level} label={`Show only ${def?.label ?? level}`} openDelay={400}>
            <UnstyledButton
              onClick={onPick ? () => onPick(level) : undefined}
              className="console-sev-row"
              data-active={active || undefined}
              aria-pressed={active}
              data-count={count}
              data-testid={`severity-${level}`}
              w="100%"
            >
              <Group gap={6} wrap="nowrap">
                <Text size="xs" w={84} ta="right" fw={active ? 700 : 400} truncate>
                  {def?.label ?? level}
                </Text>
                <div className="console-sev-track">
                  <div
                    className="console-sev-bar"
                    style={{
                      width: `${width}%`,
                      background: `var(--mantine-color-${(def?.color ?? 'gray.6').replace('.', '-')})`,
                    }}
                  />
                </div>
                <Text size="xs" w={64} className="console-mono">
                  {count.toLocaleString()}
                </Text>
              </Group>
            </UnstyledButton>
          </Tooltip>
        );
      })}
    </div>
  );
}
