import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

export function Page() {
  return (
    <Stack gap="xs" p="md">
      <Title order={1}>No such page</Title>
      <Text>
        Try the command palette (Ctrl+K) or go to the{' '}
        <Anchor component={Link} to="/">
          overview
        </Anchor>
        .
      </Text>
    </Stack>
  );
}
