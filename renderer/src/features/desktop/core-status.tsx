/** The embedded appliance's state badge and crash report (shown on every page while it is down). */
import { Alert, Badge, Button, Code, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';

import type { CoreStatus } from '../../../../electron/contract/bridge.js';
import { bridgeOrThrow, unwrap } from './desktop-start.js';
import { useDesktop } from './desktop-store.js';

const STATE_COLORS: Record<CoreStatus['state'], string> = {
  idle: 'gray',
  starting: 'blue',
  ready: 'teal',
  restarting: 'yellow',
  failed: 'red',
  stopping: 'gray',
  stopped: 'gray',
};

export function CoreStateBadge({ state }: { state: CoreStatus['state'] }) {
  return (
    <Badge color={STATE_COLORS[state]} variant="light" data-testid="core-state">
      {state}
    </Badge>
  );
}

/** The crash report: the message, the log tail (as text), and the restart button. */
export function CrashReport({ core }: { core: CoreStatus }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!core.failure) return null;
  const restart = async () => {
    setBusy(true);
    setError(null);
    try {
      useDesktop.getState().set({ core: await unwrap(bridgeOrThrow().core.restart()) });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Paper withBorder p="md" data-testid="crash-report">
      <Stack gap="sm">
        <Title order={3}>The embedded appliance stopped</Title>
        <Text size="sm" data-testid="crash-message">
          {core.failure.message}
        </Text>
        <Text size="xs" c="dimmed">
          Last lines of its log:
        </Text>
        <Code block mah={260} style={{ overflow: 'auto' }} data-testid="crash-log">
          {core.failure.logTail.join('\n')}
        </Code>
        {error ? (
          <Alert color="red" variant="light" role="alert">
            {error}
          </Alert>
        ) : null}
        <Group>
          <Button onClick={() => void restart()} loading={busy} data-testid="core-restart">
            Restart the appliance
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
