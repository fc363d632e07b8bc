/** Providers: theme (light/dark, with the page's CSP nonce), query client, notifications, router. */
import '@mantine/core/styles.layer.css';
import '@mantine/notifications/styles.layer.css';
import './console.css';

import { localStorageColorSchemeManager, MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { RouterProvider } from 'react-router';

import { cspNonce } from '../lib/csp-nonce.js';
import { cacheScope, useActiveConnection } from '../lib/active-connection.js';
import { queryClientFor } from '../lib/query-client.js';
import { createConsoleRouter } from './router.js';
import { usePrefs } from '../lib/prefs.js';
import { themeFor } from './theme.js';

const colorSchemeManager = localStorageColorSchemeManager({ key: 'console.color-scheme' });

export function App() {
  // One cache per appliance (desktop app; a browser has one): switching connection switches it.
  const connectionId = useActiveConnection((s) => s.connectionId);
  const queryClient = queryClientFor(cacheScope(connectionId));
  const [router] = useState(() =>
    createConsoleRouter(() =>
      queryClientFor(cacheScope(useActiveConnection.getState().connectionId)),
    ),
  );
  const density = usePrefs((s) => s.density);
  const theme = useMemo(() => themeFor(density), [density]);
  return (
    <MantineProvider
      theme={theme}
      defaultColorScheme="dark"
      colorSchemeManager={colorSchemeManager}
      getStyleNonce={() => cspNonce() ?? ''}
    >
      <Notifications position="bottom-right" limit={4} />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  );
}
