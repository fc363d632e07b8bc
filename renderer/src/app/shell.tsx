/**
 * The signed-in frame: one header row (search, theme, who am I), a compact navigation filtered by
 * the caller's permissions, and the page. Without a session it sends the person to sign-in and
 * brings them back to the same page afterwards.
 */
import {
  ActionIcon,
  AppShell,
  Group,
  Kbd,
  Menu,
  NavLink,
  ScrollArea,
  Stack,
  Text,
  Tooltip,
  UnstyledButton,
  useComputedColorScheme,
  useMantineColorScheme,
} from '@mantine/core';
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { Suspense, useState } from 'react';
import { Link, Navigate, Outlet, useLocation, useNavigate } from 'react-router';

import { RowsSkeleton } from '../components/ui/feedback.js';
import { DesktopHeader, DesktopNotices } from '../features/desktop/desktop-frame.js';
import { signOutDesktop } from '../features/desktop/desktop-start.js';
import { api } from '../lib/api-client.js';
import { isDesktop } from '../lib/bridge.js';
import { useCaller } from '../lib/caller.js';
import { usePrefs } from '../lib/prefs.js';
import { useSession } from '../lib/session.js';
import { CommandPalette } from './command-palette.js';
import { ShortcutsHelp, useGlobalShortcuts } from './shortcuts.js';
import { isActivePage, PAGES } from './navigation.js';

interface Information {
  data?: { hostname?: string };
}

function ThemeSwitch() {
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme('dark');
  const next = scheme === 'dark' ? 'light' : 'dark';
  return (
    <Tooltip label={`Switch to ${next} theme`}>
      <ActionIcon
        aria-label={`Switch to ${next} theme`}
        data-testid="theme-switch"
        onClick={() => setColorScheme(next)}
        size="md"
      >
        {scheme === 'dark' ? '☀' : '☾'}
      </ActionIcon>
    </Tooltip>
  );
}

/** The appliance's hostname for the header (the router's root loader starts it). */
export const informationQuery = queryOptions({
  queryKey: ['information'],
  queryFn: () => api.post<Information>('/api/information', undefined, { anonymous: true }),
  staleTime: Infinity,
});

function DensitySwitch() {
  const density = usePrefs((s) => s.density);
  const setDensity = usePrefs((s) => s.setDensity);
  const next = density === 'compact' ? 'comfortable' : 'compact';
  return (
    <Tooltip label={`Switch to ${next} tables`}>
      <ActionIcon
        aria-label={`Switch to ${next} tables`}
        data-testid="density-switch"
        data-density={density}
        onClick={() => setDensity(next)}
        size="md"
      >
        {density === 'compact' ? '≣' : '≡'}
      </ActionIcon>
    </Tooltip>
  );
}

export function Shell() {
  const token = useSession((s) => s.token);
  const user = useSession((s) => s.user);
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const caller = useCaller();
  const collapsed = usePrefs((s) => s.navCollapsed);
  const toggleNav = usePrefs((s) => s.toggleNav);
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const info = useQuery({ ...informationQuery, enabled: token !== null });
  useGlobalShortcuts({
    openPalette: () => setPaletteOpen(true),
    openHelp: () => setHelpOpen(true),
    enabled: !paletteOpen,
  });

  if (!token) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/signin?next=${encodeURIComponent(next)}`} replace />;
  }

  const visible = PAGES.filter((p) => !p.anyOf || caller.canAny(...p.anyOf));
  const groups = [...new Set(visible.map((p) => p.group))];
  const signOut = async () => {
    try {
      // Desktop: main holds the tokens and signs out (the proxy refuses /api/logout).
      if (isDesktop()) await signOutDesktop();
      else await api.post('/api/logout');
    } catch {
      // the token may already be dead: signing out locally is what matters
    }
    useSession.getState().signOut();
    queryClient.clear();
    void navigate('/signin');
  };

  const hostname = info.data?.data?.hostname;
  return (
    <AppShell
      header={{ height: 40 }}
      navbar={{ width: collapsed ? 48 : 196, breakpoint: 0 }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="sm" justify="space-between" wrap="nowrap">
          <Group gap="xs" wrap="nowrap">
            <ActionIcon
              aria-label={collapsed ? 'Expand navigation' : 'Collapse navigation'}
              onClick={toggleNav}
              size="md"
            >
              ☰
            </ActionIcon>
            <Text fw={700} size="sm" component={Link} to="/" c="inherit" td="none">
              Appliance
            </Text>
            {hostname ? (
              <Text size="sm" c="dimmed" data-testid="hostname">
                {hostname}
              </Text>
            ) : null}
            {isDesktop() ? <DesktopHeader /> : null}
          </Group>
          <UnstyledButton onClick={() => setPaletteOpen(true)} className="console-search-button">
            <Group gap="xs" justify="space-between" wrap="nowrap">
              <Text size="sm" c="dimmed">
                Search devices, pages, tools…
              </Text>
              <Kbd size="xs">Ctrl K</Kbd>
            </Group>
          </UnstyledButton>
          <Group gap="xs" wrap="nowrap">
            <DensitySwitch />
            <ThemeSwitch />
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <UnstyledButton data-testid="account-menu">
                  <Text size="sm" fw={600}>
                    {caller.user?.username ?? user?.name ?? 'Account'}
                  </Text>
                </UnstyledButton>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Label>{user?.email}</Menu.Label>
                <Menu.Item component={Link} to="/users?me=1">
                  My account and MFA
                </Menu.Item>
                <Menu.Item onClick={() => setHelpOpen(true)}>Keyboard shortcuts</Menu.Item>
                <Menu.Divider />
                <Menu.Item color="red" onClick={() => void signOut()} data-testid="sign-out">
                  Sign out
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p={4}>
        <ScrollArea>
          <nav aria-label="Main">
            <Stack gap={2}>
              {groups.map((group) => (
                <Stack key={group} gap={0} mb={6}>
                  {!collapsed ? (
                    <Text size="xs" c="dimmed" tt="uppercase" fw={600} px="xs" py={2}>
                      {group}
                    </Text>
                  ) : null}
                  {visible
                    .filter((p) => p.group === group)
                    .map((p) => {
                      const active = isActivePage(p.path, location.pathname, visible);
                      return (
                        <Tooltip
                          key={p.path}
                          label={p.label}
                          position="right"
                          disabled={!collapsed}
                        >
                          <NavLink
                            component={Link}
                            to={p.path}
                            active={active}
                            label={collapsed ? null : p.label}
                            aria-label={collapsed ? p.label : undefined}
                            leftSection={
                              <span className="console-nav-icon" aria-hidden="true">
                                {p.icon}
                              </span>
                            }
                            py={4}
                          />
                        </Tooltip>
                      );
                    })}
                </Stack>
              ))}
            </Stack>
          </nav>
        </ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main>
        {isDesktop() ? <DesktopNotices /> : null}
        <Suspense fallback={<RowsSkeleton />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
      <CommandPalette opened={paletteOpen} onClose={() => setPaletteOpen(false)} />
      <ShortcutsHelp opened={helpOpen} onClose={() => setHelpOpen(false)} />
    </AppShell>
  );
}
