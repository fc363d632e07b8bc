import { Button, Stack, Text, Title } from '@mantine/core';
import { isRouteErrorResponse, useRouteError } from 'react-router';

import { errorText } from './feedback.js';

/** A page that failed to render or load still says what happened, never a blank page. */
export function RouteError() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : errorText(error);
  return (
    <Stack p="xl" gap="sm" maw={640} role="alert">
      <Title order={1}>This page could not be shown</Title>
      <Text>{message}</Text>
      <Text size="sm" c="dimmed">
        A newer console may have been installed on the appliance: reloading fetches it.
      </Text>
      <div>
        <Button onClick={() => window.location.reload()}>Reload</Button>
      </div>
    </Stack>
  );
}
