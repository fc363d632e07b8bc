/**
 * Two terminals side by side (desktop app): a shell on this computer (node-pty in the main
 * process) and the active appliance's terminal (its WebSocket opened by main). Both reach the
 * page as MessagePorts of the typed contract; components/terminal draws them.
 */
import {
  Badge,
  Button,
  Group,
  SimpleGrid,
  Stack,
  Text,
  useComputedColorScheme,
} from '@mantine/core';
import { useCallback, useState } from 'react';

import { TerminalView, type TerminalStatus } from '../../components/terminal/terminal-view.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { getTransport } from '../../lib/transport.js';
import { isDesktopTransport } from '../../lib/desktop-transport.js';
import type { TerminalSocket } from '../../lib/transport.js';

function Pane({
  title,
  testId,
  connect,
}: {
  title: string;
  testId: string;
  connect: () => Promise<TerminalSocket>;
}) {
  const dark = useComputedColorScheme('dark') === 'dark';
  const [attempt, setAttempt] = useState(0);
  const [status, setStatus] = useState<TerminalStatus>('connecting');
  const [detail, setDetail] = useState<string | undefined>();
  const open = useCallback(() => {
    void attempt;
    return connect();
  }, [attempt, connect]);
  return (
    <Stack gap={4} data-testid={testId}>
      <Group justify="space-between">
        <Group gap={6}>
          <Text fw={600} size="sm">
            {title}
          </Text>
          <Badge
            color={status === 'open' ? 'teal' : status === 'failed' ? 'red' : 'gray'}
            variant="light"
            data-testid={`${testId}-status`}
          >
            {status}
          </Badge>
          {detail && status !== 'open' ? (
            <Text size="xs" c="dimmed">
              {detail}
            </Text>
          ) : null}
        </Group>
        <Button
          size="xs"
          variant="default"
          disabled={status === 'open'}
          onClick={() => setAttempt((n) => n + 1)}
        >
          New session
        </Button>
      </Group>
      <TerminalView
        key={attempt}
        connect={open}
        dark={dark}
        onStatus={(s, d) => {
          setStatus(s);
          setDetail(d);
        }}
      />
    </Stack>
  );
}

export function Page() {
  const local = useCallback(async () => {
    const transport = getTransport();
    if (!isDesktopTransport(transport)) throw new Error('a local terminal needs the desktop app');
    return transport.openLocalTerminal({ cols: 80, rows: 24 });
  }, []);
  const appliance = useCallback(async () => {
    const { ticket, socket } = await api.post<{ ticket: string; socket: string }>(
      '/api/terminal/tickets',
    );
    return getTransport().openSocket(`${socket}?ticket=${encodeURIComponent(ticket)}`);
  }, []);
  return (
    <>
      <PageHeader title="Terminals" subtitle="a shell on this computer beside the appliance's" />
      <SimpleGrid cols={2} spacing="md">
        <Pane title="This computer" testId="local-terminal" connect={local} />
        <Pane title="Appliance" testId="appliance-terminal" connect={appliance} />
      </SimpleGrid>
    </>
  );
}
