/** The `basic_text` warning: no keyring, so remote tokens live in memory only. */
import { Alert } from '@mantine/core';

import { useDesktop } from './desktop-store.js';

export function StorageWarning() {
  const bootstrap = useDesktop((s) => s.bootstrap);
  if (!bootstrap || bootstrap.tokenStorage !== 'memory-only') return null;
  return (
    <Alert
      color="yellow"
      variant="light"
      title="Sign-ins are not kept"
      data-testid="storage-warning"
    >
      {bootstrap.storageWarning ??
        'This computer has no keyring the app can use, so tokens for remote appliances are kept in memory only: sign in again after each start.'}
    </Alert>
  );
}
