/** Keyboard: Ctrl/Cmd+K opens the palette, `?` lists the shortcuts, `g <key>` jumps to a page. */
import { Kbd, Modal, Table } from '@mantine/core';
import { useEffect } from 'react';
import { useNavigate } from 'react-router';

import { PAGES } from './navigation.js';

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  return (
    el.isContentEditable ||
    ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) ||
    el.closest('.xterm') !== null
  );
}

export function useGlobalShortcuts({
  openPalette,
  openHelp,
  enabled,
}: {
  openPalette: () => void;
  openHelp: () => void;
  enabled: boolean;
}) {
  const navigate = useNavigate();
  useEffect(() => {
    if (!enabled) return;
    let pendingG = 0;
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        openPalette();
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      if (event.key === '?') {
        openHelp();
        return;
      }
      if (event.key === '/') {
        event.preventDefault();
        openPalette();
        return;
      }
      if (event.key === 'g') {
        pendingG = Date.now();
        return;
      }
      if (Date.now() - pendingG < 1500) {
        const page = PAGES.find((p) => p.key === event.key);
        pendingG = 0;
        if (page) void navigate(page.path);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled, navigate, openPalette, openHelp]);
}

export function ShortcutsHelp({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const rows: [string, string][] = [
    ['Ctrl K  or  /', 'Command palette: devices, pages, tools ("ping 10.0.0.1")'],
    ['?', 'This list'],
    ...PAGES.filter((p) => p.key).map((p): [string, string] => [`g ${p.key}`, p.label]),
    ['Esc', 'Close a dialog'],
  ];
  return (
    <Modal opened={opened} onClose={onClose} title="Keyboard shortcuts" size="md">
      <Table>
        <Table.Tbody>
          {rows.map(([keysText, what]) => (
            <Table.Tr key={keysText}>
              <Table.Td w={140}>
                <Kbd>{keysText}</Kbd>
              </Table.Td>
              <Table.Td>{what}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Modal>
  );
}
