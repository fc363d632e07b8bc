/**
 * The router: one lazy chunk per page, so `/` loads only the shell and the overview. Pages live
 * in features/<area>/ and export `Page`.
 */
import type { QueryClient } from '@tanstack/react-query';
import { createBrowserRouter, type RouteObject } from 'react-router';

import { RouteError } from '../components/ui/route-error.js';
import { isDesktop } from '../lib/bridge.js';
import { callerQuery } from '../lib/caller.js';
import { devicesQuery, pingQuery } from '../lib/devices-api.js';
import { useSession } from '../lib/session.js';
import { informationQuery, Shell } from './shell.js';

type PageModule = { Page: React.ComponentType };
const page = (load: () => Promise<PageModule>) => async () => ({ Component: (await load()).Page });

/**
 * Starts a page's main query with the navigation, in parallel with its code chunk (the page finds
 * it in the cache). Never blocks the navigation: the promise is not awaited.
 */
/** The query client, or a function giving the active connection's (desktop: one per appliance). */
type ClientSource = QueryClient | (() => QueryClient) | null;

function prefetch(
  source: ClientSource,
  start: (client: QueryClient, url: URL) => Promise<unknown>,
) {
  return ({ request }: { request: Request }) => {
    const queryClient = typeof source === 'function' ? source() : source;
    if (queryClient && useSession.getState().token)
      void start(queryClient, new URL(request.url)).catch(() => undefined);
    return null;
  };
}

/** Pages of the desktop app only (the bridge is there before the router is built). */
function desktopRoutes(): RouteObject[] {
  if (!isDesktop()) return [];
  return [
    {
      path: 'desktop/connections',
      lazy: page(() => import('../features/desktop/connections-page.js')),
    },
    {
      path: 'desktop/appliance',
      lazy: page(() => import('../features/desktop/appliance-page.js')),
    },
    {
      path: 'desktop/terminals',
      lazy: page(() => import('../features/desktop/terminals-page.js')),
    },
  ];
}

export function consoleRoutes(queryClient: ClientSource = null): RouteObject[] {
  return [
    {
      path: '/signin',
      // In the desktop window sign-in goes through the main process (IPC), never the proxy.
      lazy: isDesktop()
        ? page(() => import('../features/desktop/desktop-signin-page.js'))
        : page(() => import('../features/signin/signin-page.js')),
    },
    {
      path: '/',
      element: <Shell />,
      // The shell's own queries start with the navigation, beside the page's (never after the
      // page's first render: a big page would hold them back).
      loader: prefetch(queryClient, (client) =>
        Promise.all([client.prefetchQuery(callerQuery), client.prefetchQuery(informationQuery)]),
      ),
      errorElement: <RouteError />,
      children: [
        { index: true, lazy: page(() => import('../features/overview/overview-page.js')) },
        {
          path: 'devices',
          // The list first, then at once the slower status query (before the rows render, not
          // after): the appliance serves one request at a time per core.
          loader: prefetch(queryClient, async (client, url) => {
            const filter = filterOf(url.searchParams);
            await client.prefetchQuery(devicesQuery(filter));
            await client.prefetchQuery(pingQuery(filter));
          }),
          // Typing in the search box changes the URL on every key: the page's debounced queries
          // follow the filter, the loader only the arrival on the page.
          shouldRevalidate: ({ currentUrl, nextUrl }) => currentUrl.pathname !== nextUrl.pathname,
          lazy: page(() => import('../features/devices/devices-page.js')),
        },
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
        { path: 'logs/syslog', lazy: page(() => import('../features/logs/syslog-page.js')) },
        { path: 'logs/windows', lazy: page(() => import('../features/logs/windows-page.js')) },
        { path: 'logs/ids', lazy: page(() => import('../features/logs/ids-page.js')) },
        {
          path: 'logs/ids/:event',
          lazy: page(() => import('../features/logs/ids-event-page.js')),
        },
        { path: 'flows', lazy: page(() => import('../features/flows/flows-page.js')) },
        {
          path: 'flows/aggregated',
          lazy: page(() => import('../features/flows/aggregated-page.js')),
        },
        { path: 'flows/top', lazy: page(() => import('../features/flows/top-page.js')) },
        { path: 'captures', lazy: page(() => import('../features/captures/captures-page.js')) },
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
        {
          path: 'maintenance/partitions',
          lazy: page(() => import('../features/maintenance/partitions-page.js')),
        },
        { path: 'alerts', lazy: page(() => import('../features/alerts/alerts-page.js')) },
        {
          path: 'alerts/history',
          lazy: page(() => import('../features/alerts/history-page.js')),
        },
        {
          path: 'alerts/outlets',
          lazy: page(() => import('../features/alerts/outlets-page.js')),
        },
        {
          path: 'alerts/templates',
          lazy: page(() => import('../features/alerts/templates-page.js')),
        },
        {
          path: 'alerts/windows',
          lazy: page(() => import('../features/alerts/windows-page.js')),
        },
        { path: 'alerts/legacy', lazy: page(() => import('../features/alerts/legacy-page.js')) },
        {
          path: 'mail-relay',
          lazy: page(() => import('../features/alerts/mail-relay-page.js')),
        },
        {
          path: 'settings/certificate',
          lazy: page(() => import('../features/certificate/certificate-page.js')),
        },
        {
          path: 'settings/services',
          lazy: page(() => import('../features/settings/services-page.js')),
        },
        {
          path: 'settings/network',
          lazy: page(() => import('../features/settings/network-page.js')),
        },
        {
          path: 'settings/hostname',
          lazy: page(() => import('../features/settings/hostname-page.js')),
        },
        { path: 'settings/time', lazy: page(() => import('../features/settings/time-page.js')) },
        {
          path: 'settings/license',
          lazy: page(() => import('../features/settings/license-page.js')),
        },
        {
          path: 'settings/retention',
          lazy: page(() => import('../features/settings/retention-page.js')),
        },
        {
          path: 'settings/daemons',
          lazy: page(() => import('../features/settings/daemons-page.js')),
        },
        { path: 'os-upgrade', lazy: page(() => import('../features/upgrader/upgrader-page.js')) },
        { path: 'directory', lazy: page(() => import('../features/directory/directory-page.js')) },
        { path: 'agents', lazy: page(() => import('../features/agents/agents-page.js')) },
        ...desktopRoutes(),
        { path: '*', lazy: page(() => import('../components/ui/not-found-page.js')) },
      ],
    },
  ];
}

/** The devices page's filter as its URL states it (search, status, tag). */
function filterOf(params: URLSearchParams) {
  const status = params.get('status');
  return {
    search: params.get('search') || undefined,
    status: status === 'up' || status === 'down' ? status : undefined,
    tag: params.get('tag') || undefined,
  } as const;
}

export function createConsoleRouter(queryClient: ClientSource) {
  return createBrowserRouter(consoleRoutes(queryClient));
}
