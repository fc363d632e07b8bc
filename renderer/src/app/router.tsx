/**
 * The router: one lazy chunk per page, so `/` loads only the shell and the overview. Pages live
 * in features/<area>/ and export `Page`.
 */
import type { QueryClient } from '@tanstack/react-query';
import { createBrowserRouter, type RouteObject } from 'react-router';

import { RouteError } from '../components/ui/route-error.js';
import { Shell } from './shell.js';

type PageModule = { Page: React.ComponentType };
const page = (load: () => Promise<PageModule>) => async () => ({ Component: (await load()).Page });

export function consoleRoutes(): RouteObject[] {
  return [
    {
      path: '/signin',
      lazy: page(() => import('../features/signin/signin-page.js')),
    },
    {
      path: '/',
      element: <Shell />,
      errorElement: <RouteError />,
      children: [
        { index: true, lazy: page(() => import('../features/overview/overview-page.js')) },
        { path: 'devices', lazy: page(() => import('../features/devices/devices-page.js')) },
        { path: 'devices/:id', lazy: page(() => import('../features/devices/device-page.js')) },
        {
          path: 'dashboards',
          lazy: page(() => import('../features/dashboards/dashboards-page.js')),
        },
        {
          path: 'dashboards/:name',
          lazy: page(() => import('../features/dashboards/dashboards-page.js')),
        },
        { path: 'urls', lazy: page(() => import('../features/urls/urls-page.js')) },
        { path: 'tools', lazy: page(() => import('../features/tools/tools-page.js')) },
        { path: 'tools/:tool', lazy: page(() => import('../features/tools/tools-page.js')) },
        { path: 'terminal', lazy: page(() => import('../features/terminal/terminal-page.js')) },
        { path: 'pending', lazy: page(() => import('../features/pending/pending-page.js')) },
        {
          path: 'credentials',
          lazy: page(() => import('../features/pending/credentials-page.js')),
        },
        { path: 'localnets', lazy: page(() => import('../features/pending/localnets-page.js')) },
        { path: 'users', lazy: page(() => import('../features/users/users-page.js')) },
        { path: 'tokens', lazy: page(() => import('../features/tokens/tokens-page.js')) },
        { path: 'oauth-clients', lazy: page(() => import('../features/oauth/oauth-page.js')) },
        { path: '*', lazy: page(() => import('../components/ui/not-found-page.js')) },
      ],
    },
  ];
}

export function createConsoleRouter(_queryClient: QueryClient) {
  return createBrowserRouter(consoleRoutes());
}
