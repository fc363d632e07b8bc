/** Loading, failure and empty states: skeletons instead of spinners, the API's own message on failure. */
import { Alert, Button, Group, Skeleton, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';

import { ApiError } from '../../lib/api-error.js';

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}

export function ErrorNotice({
  error,
  onRetry,
  title,
}: {
  error: unknown;
  onRetry?: () => void;
  title?: string;
}) {
  const denied = error instanceof ApiError && error.kind === 'denied';
  return (
    <Alert
      color={denied ? 'yellow' : 'red'}
      variant="light"
      title={title ?? (denied ? 'Not permitted' : 'The appliance refused or failed')}
      role="alert"
      data-testid="error-notice"
    >
      <Group justify="space-between" wrap="nowrap" gap="md">
        <Text size="sm">{errorText(error)}</Text>
        {onRetry && !denied ? (
          <Button variant="default" onClick={onRetry}>
            Retry
          </Button>
        ) : null}
      </Group>
    </Alert>
  );
}

export function RowsSkeleton({ rows = 8, height = 22 }: { rows?: number; height?: number }) {
  return (
    <Stack gap={6} aria-busy="true" aria-label="Loading">
      {Array.from({ length: rows }, (_, i) => (
        <Skeleton key={i} height={height} />
      ))}
    </Stack>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Stack align="center" gap={4} py="xl" data-testid="empty-state">
      <Text fw={600}>{title}</Text>
      {children ? (
        <Text size="sm" c="dimmed" ta="center" maw={520}>
          {children}
        </Text>
      ) : null}
    </Stack>
  );
}
