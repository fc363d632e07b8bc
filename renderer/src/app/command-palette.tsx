/** Ctrl/Cmd+K: find devices by name or IP, pages and tools ("ping 127.0.0.2"), from the keyboard. */
import {
  Badge,
  Group,
  Modal,
  ScrollArea,
  Stack,
  Text,
  TextInput,
  UnstyledButton,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useNavigate } from 'react-router';

import { devicesQuery } from '../lib/devices-api.js';
import { useCaller } from '../lib/caller.js';
import { PAGES } from './navigation.js';
import { paletteResults, type PaletteItem } from './palette-search.js';

const KIND_COLORS: Record<PaletteItem['kind'], string> = {
  tool: 'grape',
  page: 'gray',
  device: 'signal',
};

export function CommandPalette({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState(0);
  const navigate = useNavigate();
  const caller = useCaller();
  const canSeeDevices = caller.canAny('devices', 'overwatch');
  const devices = useQuery({ ...devicesQuery({}), enabled: opened && canSeeDevices });
  const results = useMemo(
    () =>
      paletteResults({
        query,
        pages: PAGES.filter((p) => !p.anyOf || caller.canAny(...p.anyOf)),
        devices: devices.data ?? [],
        canUseTools: caller.can('tools'),
      }),
    [query, devices.data, caller],
  );
  const close = () => {
    setQuery('');
    setSelected(0);
    onClose();
  };
  const go = (item: PaletteItem | undefined) => {
    if (!item) return;
    close();
    void navigate(item.to);
  };
  return (
    <Modal
      opened={opened}
      onClose={close}
      withCloseButton={false}
      size="lg"
      yOffset="12vh"
      centered={false}
      padding="xs"
      title="Go to a device, a page or a tool"
    >
      <TextInput
        data-autofocus
        autoFocus
        size="sm"
        placeholder="Device name or IP, a page, or a command: ping 127.0.0.2, mtr host, trace host"
        aria-label="Search"
        value={query}
        onChange={(e) => {
          setQuery(e.currentTarget.value);
          setSelected(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setSelected((s) => Math.min(s + 1, results.length - 1));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setSelected((s) => Math.max(s - 1, 0));
          } else if (e.key === 'Enter') {
            e.preventDefault();
            go(results[selected]);
          }
        }}
      />
      <ScrollArea.Autosize mah="50vh" mt="xs">
        <Stack gap={0} role="listbox" aria-label="Results">
          {results.length === 0 ? (
            <Text size="sm" c="dimmed" p="xs">
              {devices.isFetching ? 'Loading devices…' : 'Nothing matches.'}
            </Text>
          ) : null}
          {results.map((item, index) => (
            <UnstyledButton
              key={item.id}
              role="option"
              aria-selected={index === selected}
              className="console-palette-item"
              data-selected={index === selected || undefined}
              onMouseEnter={() => setSelected(index)}
              onClick={() => go(item)}
            >
              <Group justify="space-between" wrap="nowrap" px="xs" py={4}>
                <Group gap="xs" wrap="nowrap">
                  <Badge color={KIND_COLORS[item.kind]} variant="filled" w={64} tt="none">
                    {item.kind}
                  </Badge>
                  <Text size="sm">{item.label}</Text>
                </Group>
                {item.detail ? (
                  <Text size="xs" c="dimmed">
                    {item.detail}
                  </Text>
                ) : null}
              </Group>
            </UnstyledButton>
          ))}
        </Stack>
      </ScrollArea.Autosize>
    </Modal>
  );
}
