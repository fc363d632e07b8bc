/**
 * A dense, sortable, virtualized table (@tanstack/react-table for columns and sorting,
 * @tanstack/react-virtual for rows): 20,000 rows render as the ~40 that are on screen.
 * Keyboard: rows are focusable, Enter opens the row, arrow keys move.
 */
import {
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type RowData,
  type SortingState,
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef, useState, type KeyboardEvent } from 'react';

declare module '@tanstack/react-table' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ColumnMeta<TData extends RowData, TValue> {
    /** The column takes the remaining width. */
    grow?: boolean;
  }
}

export interface VirtualTableProps<T> {
  data: T[];
  columns: ColumnDef<T, unknown>[];
  rowHeight?: number;
  height: number | string;
  onOpen?: (row: T) => void;
  getRowId?: (row: T) => string;
  label: string;
  initialSorting?: SortingState;
}

export function VirtualTable<T>({
  data,
  columns,
  rowHeight = 28,
  height,
  onOpen,
  getRowId,
  label,
  initialSorting = [],
}: VirtualTableProps<T>) {
  const [sorting, setSorting] = useState<SortingState>(initialSorting);
  const table = useReactTable({
    data,
    columns,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    ...(getRowId ? { getRowId: (row: T) => getRowId(row) } : {}),
  });
  const rows = table.getRowModel().rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 12,
    initialRect: { width: 1000, height: 600 },
  });
  const headerGroup = table.getHeaderGroups()[0];
  const widthOf = (size: number, grow: boolean) =>
    grow ? { flex: `1 1 ${size}px`, minWidth: size } : { flex: `0 0 ${size}px`, width: size };

  const onRowKey = (event: KeyboardEvent<HTMLDivElement>, index: number) => {
    const move = (to: number) => {
      event.preventDefault();
      const target = Math.max(0, Math.min(rows.length - 1, to));
      virtualizer.scrollToIndex(target);
      requestAnimationFrame(() =>
        scrollRef.current
          ?.querySelector<HTMLElement>(`[data-row-index="${target}"]`)
          ?.focus({ preventScroll: true }),
      );
    };
    if (event.key === 'ArrowDown') move(index + 1);
    else if (event.key === 'ArrowUp') move(index - 1);
    else if (event.key === 'Enter' && onOpen) onOpen(rows[index]!.original);
  };

  return (
    <div
      ref={scrollRef}
      className="console-vtable"
      style={{ height }}
      role="table"
      aria-label={label}
      aria-rowcount={rows.length + 1}
      data-testid="virtual-table"
    >
      <div className="console-vtable-head" role="row" aria-rowindex={1}>
        {headerGroup?.headers.map((header) => {
          const sorted = header.column.getIsSorted();
          const meta = header.column.columnDef.meta;
          return (
            <div
              key={header.id}
              role="columnheader"
              className="console-vtable-cell"
              style={widthOf(header.getSize(), meta?.grow === true)}
              aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
            >
              {header.column.getCanSort() ? (
                <button
                  type="button"
                  className="console-sort-button"
                  onClick={header.column.getToggleSortingHandler()}
                >
                  {flexRender(header.column.columnDef.header, header.getContext())}
                  {sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}
                </button>
              ) : (
                flexRender(header.column.columnDef.header, header.getContext())
              )}
            </div>
          );
        })}
      </div>
      <div role="rowgroup" style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((item) => {
          const row = rows[item.index]!;
          return (
            <div
              key={row.id}
              role="row"
              aria-rowindex={item.index + 2}
              data-row-index={item.index}
              tabIndex={onOpen ? 0 : -1}
              className="console-vtable-row"
              style={{ height: rowHeight, transform: `translateY(${item.start}px)` }}
              onKeyDown={(e) => onRowKey(e, item.index)}
              onDoubleClick={onOpen ? () => onOpen(row.original) : undefined}
            >
              {row.getVisibleCells().map((cell) => {
                const meta = cell.column.columnDef.meta;
                return (
                  <div
                    key={cell.id}
                    role="cell"
                    className="console-vtable-cell"
                    style={widthOf(cell.column.getSize(), meta?.grow === true)}
                  >
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </div>
                );
              })}
            </div>
          );
        })}
      </div>
    </div>
  );
}
