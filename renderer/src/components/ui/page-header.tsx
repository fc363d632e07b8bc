import { Group, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** One toolbar row per page: title, a short subtitle, actions on the right. */
export function PageHeader({
  title,
  subtitle,
  children,
}: {
  title: ReactNode;
  subtitle?: ReactNode;
  children?: ReactNode;
}) {
  return (
    <Group justify="space-between" align="center" mb="sm" wrap="nowrap" gap="md">
      <Group gap="sm" align="baseline" wrap="nowrap" style={{ minWidth: 0, flex: '1 1 auto' }}>
        <Title
          order={1}
          style={{
            whiteSpace: 'nowrap',
            overflow: 'hidden',
            textOverflow: 'ellipsis',
            minWidth: 0,
          }}
        >
          {title}
        </Title>
        {subtitle ? (
          <Text size="sm" c="dimmed" truncate>
            {subtitle}
          </Text>
        ) : null}
      </Group>
      {children ? (
        <Group gap="xs" wrap="nowrap" style={{ flexShrink: 0 }}>
          {children}
        </Group>
      ) : null}
    </Group>
  );
}
