/**
 * The widget grid of dashboards and device pages (react-grid-layout): 12 columns, widgets
 * dragged by their title bar and resized from their corner. `onArrange` is called when the
 * person has moved or resized a widget (never for the grid's own compaction on mount), with the
 * items' positions only.
 */
import 'react-grid-layout/css/styles.css';
import 'react-resizable/css/styles.css';

import { Group, Paper } from '@mantine/core';
import type { ReactNode } from 'react';
import GridLayout, { WidthProvider, type Layout } from 'react-grid-layout';

export interface GridItem {
  i: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface GridWidget {
  i: string;
  title: ReactNode;
  /** Buttons in the title bar (they do not start a drag). */
  actions?: ReactNode;
  body: (height: number) => ReactNode;
  /** Marks the card (a pinned widget, say). */
  highlight?: boolean;
}

export const GRID_ROW_HEIGHT = 56;
const MARGIN = 8;
const TITLE_BAR = 44;

const Grid = WidthProvider(GridLayout);

export function positionsOf(items: readonly GridItem[]): GridItem[] {
  return items.map(({ i, x, y, w, h }) => ({ i, x, y, w, h }));
}

export function WidgetGrid({
  layout,
  widgets,
  onArrange,
  editable = true,
  label,
}: {
  layout: readonly GridItem[];
  widgets: readonly GridWidget[];
  onArrange?: (layout: GridItem[]) => void;
  editable?: boolean;
  label: string;
}) {
  const arrange = (next: Layout[]) => onArrange?.(positionsOf(next));
  return (
    <section aria-label={label}>
      <Grid
        className="console-grid"
        layout={positionsOf(layout)}
        cols={12}
        rowHeight={GRID_ROW_HEIGHT}
        margin={[MARGIN, MARGIN]}
        containerPadding={[0, 0]}
        isDraggable={editable}
        isResizable={editable}
        draggableHandle=".console-widget-handle"
        draggableCancel=".console-widget-drag-cancel"
        onDragStop={arrange}
        onResizeStop={arrange}
      >
        {widgets.map((w) => {
          const item = layout.find((l) => l.i === w.i);
          const height = Math.max(
            80,
            (item?.h ?? 4) * (GRID_ROW_HEIGHT + MARGIN) - MARGIN - TITLE_BAR,
          );
          return (
            <div key={w.i} data-testid="widget" data-widget={w.i}>
              <Paper
                withBorder
                p="xs"
                h="100%"
                className={w.highlight ? 'console-widget-highlight' : undefined}
              >
                <Group
                  justify="space-between"
                  className={editable ? 'console-widget-handle' : undefined}
                  mb={4}
                  wrap="nowrap"
                >
                  {w.title}
                  {w.actions ? (
                    <Group gap={2} wrap="nowrap" className="console-widget-drag-cancel">
                      {w.actions}
                    </Group>
                  ) : null}
                </Group>
                {w.body(height)}
              </Paper>
            </div>
          );
        })}
      </Grid>
    </section>
  );
}
