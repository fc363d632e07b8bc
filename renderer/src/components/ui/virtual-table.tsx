/**
 * A dense, sortable, virtualized table (@tanstack/react-virtual for rows): 20,000 rows render as
 * the ~40 that are on screen. Nothing is built per row: cells are computed only for the visible
 * rows, and sorting orders an index array over the plain data with one key per row (computed once
 * per sort, compared numerically or with one shared collator). Row height follows the density
 * preference. Keyboard: rows are focusable, Enter opens the row, arrow keys move.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';

import { usePrefs, type Density } from '../../lib/prefs.js';

export type SortKey = string | number | null | undefined;

export interface Column<T> {
  id: string;
  header: ReactNode;
  /** Width in pixels (the minimum width of a growing column). */
  size: number;
  /** The column takes the remaining width. */
  grow?: boolean;
  /** The cell's content; without it, sortValue's text. */
  cell?: (row: T) => ReactNode;
  /** The value sorting uses; without it the column does not sort. Nulls sort last. */
  sortValue?: (row: T) => SortKey;
}

export interface SortState {
  id: string;
  desc: boolean;
}

export interface VirtualTableProps<T> {
  data: readonly T[];
  columns: Column<T>[];
  /** Overrides the density's row height. */
  rowHeight?: number;
  height: number | string;
  onOpen?: (row: T) => void;
  getRowId?: (row: T, index: number) => string;
  label: string;
  initialSorting?: SortState | null;
}

export const ROW_HEIGHT: Record<Density, number> = { compact: 28, comfortable: 36 };

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** Indices of `data` in the order of `sort` (null: the data's own order). Exported for tests. */
export function sortedOrder<T>(
  data: readonly T[],
  sortValue: ((row: T) => SortKey) | undefined,
  desc: boolean,
): number[] | null {
  if (!sortValue) return null;
  const values = data.map(sortValue);
  const order = data.map((_, i) => i);
  const sign = desc ? -1 : 1;
  order.sort((a, b) => {
    const x = values[a];
    const y = values[b];
    const xNull = x === null || x === undefined;
    const yNull = y === null || y === undefined;
    if (xNull || yNull) return xNull === yNull ? a - b : xNull ? 1 : -1;
    const c =
      typeof x === 'number' && typeof y === 'number'
        ? x - y
        : collator.compare(String(x), String(y));
    return c === 0 ? a - b : c * sign;
  });
  return order;
}

export function VirtualTable<T>({
  data,
  columns,
  rowHeight,
  height,
  onOpen,
  getRowId,
  label,
  initialSorting = null,
}: VirtualTableProps<T>) {
  const density = usePrefs((s) => s.density);
  const rowH = rowHeight ?? ROW_HEIGHT[density];
  const [sorting, setSorting] = useState<SortState | null>(initialSorting);
  const sortColumn = sorting ? columns.find((c) => c.id === sorting.id) : undefined;
  const sortValue = sortColumn?.sortValue;
  const desc = sorting?.desc ?? false;
  const order = useMemo(() => sortedOrder(data, sortValue, desc), [data, sortValue, desc]);
  const rowAt = (index: number): T => data[order ? order[index]! : index]!;

  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: data.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowH,
    overscan: 8,
    initialRect: { width: 1000, height: 600 },
  });
  // A density change changes every row's height: forget the measured sizes.
  useEffect(() => virtualizer.measure(), [virtualizer, rowH]);
  const widthOf = (size: number, grow: boolean | undefined) =>
    grow ? { flex: `1 1 ${size}px`, minWidth: size } : { flex: `0 0 ${size}px`, width: size };
  // Three clicks: ascending, descending, unsorted.
  const toggleSort = (id: string) =>
    setSorting((s) => (s?.id !== id ? { id, desc: false } : s.desc ? null : { id, desc: true }));

  const onRowKey = (event: KeyboardEvent<HTMLDivElement>, index: number) => {
    const move = (to: number) => {
      event.preventDefault();
      const target = Math.max(0, Math.min(data.length - 1, to));
      virtualizer.scrollToIndex(target);
      requestAnimationFrame(() =>
        scrollRef.current
          ?.querySelector<HTMLElement>(`[data-row-index="${target}"]`)
          ?.focus({ preventScroll: true }),
      );
    };
    if (event.key === 'ArrowDown') move(index + 1);
    else if (event.key === 'ArrowUp') move(index - 1);
    else if (event.key === 'Enter' && onOpen) onOpen(rowAt(index));
  };

  return (
    <div
      ref={scrollRef}
      className="console-vtable"
      style={{ height }}
      role="table"
      aria-label={label}
      aria-rowcount={data.length + 1}
      data-testid="virtual-table"
      data-density={density}
    >
      <div className="console-vtable-head" role="row" aria-rowindex={1}>
        {columns.map((column) => {
          const sorted = sorting?.id === column.id ? (sorting.desc ? 'desc' : 'asc') : false;
          return (
            <div
              key={column.id}
              role="columnheader"
              className="console-vtable-cell"
              style={widthOf(column.size, column.grow)}
              aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
            >
              {column.sortValue ? (
                <button
                  type="button"
                  className="console-sort-button"
                  onClick={() => toggleSort(column.id)}
                >
                  {column.header}
                  {sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}
                </button>
              ) : (
                column.header
              )}
            </div>
          );
        })}
      </div>
      <div role="rowgroup" style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rowAt(item.index);
          return (
            <div
              key={getRowId ? getRowId(row, item.index) : item.index}
              role="row"
              aria-rowindex={item.index + 2}
              data-row-index={item.index}
              tabIndex={onOpen ? 0 : -1}
              className="console-vtable-row"
              style={{ height: rowH, transform: `translateY(${item.start}px)` }}
              onKeyDown={(e) => onRowKey(e, item.index)}
              onDoubleClick={onOpen ? () => onOpen(row) : undefined}
            >
              {columns.map((column) => (
                <div
                  key={column.id}
                  role="cell"
                  className="console-vtable-cell"
                  style={widthOf(column.size, column.grow)}
                >
                  {column.cell ? column.cell(row) : String(column.sortValue?.(row) ?? '')}
                </div>
              ))}
            </div>
          );
        })}
      </div>
    </div>
  );
}
