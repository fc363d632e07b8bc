/** The appliance's refusal of a flow request (a 400: an inverted window, a bad filter) as its message. */
import { Alert } from '@mantine/core';

import { ErrorNotice, errorText } from '../../components/ui/feedback.js';
import { ApiError } from '../../lib/api-client.js';

export function Refusal({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  if (error instanceof ApiError && error.status === 400)
    return (
      <Alert
        color="red"
        variant="light"
        title="The appliance refused this view"
        data-testid="refusal"
      >
        {errorText(error)}
      </Alert>
    );
  return <ErrorNotice error={error} onRetry={onRetry} />;
}
