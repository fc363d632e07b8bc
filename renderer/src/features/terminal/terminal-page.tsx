/**
 * A shell on the appliance for `sa` users: a ticket from POST /api/terminal/tickets, then the
 * WebSocket through the transport (lib/transport.ts). The session ends when the page closes it.
 */
import { Badge, Button, Text, useComputedColorScheme } from '@mantine/core';
import { useCallback, useState } from 'react';

import { TerminalView, type TerminalStatus } from '../../components/terminal/terminal-view.js';
import { ErrorNotice } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { api } from '../../lib/api-client.js';
import { useCaller } from '../../lib/caller.js';
import { getTransport } from '../../lib/transport.js';

const COLORS: Record<TerminalStatus, string> = {
  connecting: 'blue',
  open: 'teal',
  closed: 'gray',
  failed: 'red',
};

export function Page() {
  const caller = useCaller();
  const dark = useComputedColorScheme('dark') === 'dark';
  const [attempt, setAttempt] = useState(0);
  const [status, setStatus] = useState<TerminalStatus>('connecting');
  const [detail, setDetail] = useState<string | undefined>();
  const [error, setError] = useState<unknown>(null);
  const connect = useCallback(async () => {
    void attempt; // a new session on "New session"
    setError(null);
    try {
      const { ticket, socket } = await api.post<{ ticket: string; socket: string }>(
        '/api/terminal/tickets',
      );
      return getTransport().openSocket(`${socket}?ticket=${encodeURIComponent(ticket)}`);
    } catch (err) {
      setError(err);
      throw err;
    }
  }, [attempt]);
  return (
    <>
      <PageHeader title="Terminal" subtitle="a shell on the appliance, as its service user">
        <Badge
          color={COLORS[status]}
          variant={dark ? 'light' : 'outline'}
          data-testid="terminal-status"
        >
          {status}
        </Badge>
        {detail && status !== 'open' ? (
          <Text size="sm" c="dimmed">
            {detail}
          </Text>
        ) : null}
        <Text size="xs" c="dimmed">
          Copy Ctrl+Shift+C · Paste Ctrl+Shift+V
        </Text>
        <Button
          variant="default"
          onClick={() => setAttempt((n) => n + 1)}
          disabled={status === 'open'}
        >
          New session
        </Button>
      </PageHeader>
      {!caller.loading && !caller.can('sa') ? (
        <Text size="sm" c="dimmed" mb="xs">
          The terminal is for sa users: the appliance will refuse a ticket.
        </Text>
      ) : null}
      {error ? <ErrorNotice error={error} /> : null}
      <TerminalView
        key={attempt}
        connect={connect}
        dark={dark}
        onStatus={(s, d) => {
          setStatus(s);
          setDetail(d);
        }}
      />
    </>
  );
}
