/** The time window shared by device pages and dashboards: last hour, 8 hours, day, week, 30 days, custom. */
import { Button, Group, Popover, SegmentedControl, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';

import { usePrefs, WINDOW_CHOICES } from '../../lib/prefs.js';

function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

export function WindowPicker() {
  const window = usePrefs((s) => s.window);
  const setWindow = usePrefs((s) => s.setWindow);
  const [open, setOpen] = useState(false);
  const [start, setStart] = useState(localInput(Date.now() - 86_400_000));
  const [end, setEnd] = useState(localInput(Date.now()));
  const value = window.kind === 'relative' ? String(window.hours) : 'custom';
  return (
    <Group gap={4} wrap="nowrap">
      <SegmentedControl
        aria-label="Time window"
        value={value}
        onChange={(v) => {
          if (v === 'custom') setOpen(true);
          else setWindow({ kind: 'relative', hours: Number(v) });
        }}
        data={[
          ...WINDOW_CHOICES.map((c) => ({ value: String(c.hours), label: c.label })),
          ...(window.kind === 'custom' ? [{ value: 'custom', label: 'Custom' }] : []),
        ]}
      />
      <Popover opened={open} onChange={setOpen} position="bottom-end" withArrow trapFocus>
        <Popover.Target>
          <Button variant="subtle" size="compact-xs" onClick={() => setOpen((o) => !o)}>
            {window.kind === 'custom' ? 'Custom range…' : 'Range…'}
          </Button>
        </Popover.Target>
        <Popover.Dropdown>
          <Stack gap="xs">
            <TextInput
              type="datetime-local"
              label="From (local time)"
              value={start}
              onChange={(e) => setStart(e.currentTarget.value)}
            />
            <TextInput
              type="datetime-local"
              label="To (local time)"
              value={end}
              onChange={(e) => setEnd(e.currentTarget.value)}
            />
            <Button
              onClick={() => {
                const s = new Date(start).getTime();
                const e = new Date(end).getTime();
                if (Number.isFinite(s) && Number.isFinite(e) && e > s) {
                  setWindow({
                    kind: 'custom',
                    start: new Date(s).toISOString(),
                    end: new Date(e).toISOString(),
                  });
                  setOpen(false);
                }
              }}
            >
              Apply
            </Button>
          </Stack>
        </Popover.Dropdown>
      </Popover>
    </Group>
  );
}
