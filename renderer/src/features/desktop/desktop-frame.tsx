/**
 * What the desktop app adds to the console's frame (app/shell.tsx renders these only when the
 * bridge is there): the appliance switcher in the header, and above every page the notices that
 * concern the active appliance (no keyring, a changed certificate, a crashed embedded appliance).
 * Deep links from main open their route here.
 */
import { Anchor, Group, Stack } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';

import { EMBEDDED_CONNECTION_ID } from '../../../../electron/contract/bridge.js';
import { useActiveConnection } from '../../lib/active-connection.js';
import { CoreStateBadge, CrashReport } from './core-status.js';
import { CertificateChanged } from './certificate-panels.js';
import { ConnectionSwitcher } from './connection-switcher.js';
import { bridgeOrThrow, switchConnection, unwrap } from './desktop-start.js';
import { useDesktop } from './desktop-store.js';

export function DesktopHeader() {
  const core = useDesktop((s) => s.core);
  return (
    <Group gap="xs" wrap="nowrap" data-testid="desktop-header">
      <ConnectionSwitcher />
      {core ? (
        <Anchor
          component={Link}
          to="/desktop/appliance"
          size="xs"
          aria-label="This computer's appliance"
        >
          <CoreStateBadge state={core.state} />
        </Anchor>
      ) : null}
    </Group>
  );
}

export function DesktopNotices() {
  const active = useActiveConnection((s) => s.connectionId);
  const problem = useDesktop((s) => s.certificateProblem);
  const core = useDesktop((s) => s.core);
  const connection = useDesktop((s) => s.connections.find((c) => c.id === problem?.connectionId));
  const pendingRoute = useDesktop((s) => s.pendingRoute);
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();

  useEffect(() => {
    if (!pendingRoute) return;
    useDesktop.getState().set({ pendingRoute: null });
    void navigate(pendingRoute);
  }, [pendingRoute, navigate]);

  const showProblem =
    problem && problem.connectionId === active && problem.presentedSha256 && connection;
  // The appliance page shows the report itself.
  const showCrash =
    active === EMBEDDED_CONNECTION_ID &&
    core?.failure &&
    core.state === 'failed' &&
    location.pathname !== '/desktop/appliance';
  return (
    <Stack gap="sm" mb={showProblem || showCrash ? 'md' : 0}>
      {showProblem ? (
        <CertificateChanged
          name={connection.name}
          origin={connection.origin}
          pinnedSha256={problem.pinnedSha256 ?? connection.pinnedSha256}
          presentedSha256={problem.presentedSha256!}
          onRepin={async () => {
            const bridge = bridgeOrThrow();
            await unwrap(
              bridge.connections.repin({
                id: connection.id,
                acceptSha256: problem.presentedSha256!,
              }),
            );
            useDesktop.getState().set({
              certificateProblem: null,
              connections: await unwrap(bridge.connections.list()),
            });
            await queryClient.resetQueries();
          }}
          onSwitchAway={
            active === EMBEDDED_CONNECTION_ID
              ? undefined
              : () => void switchConnection(EMBEDDED_CONNECTION_ID).then(() => navigate('/'))
          }
        />
      ) : null}
      {showCrash ? <CrashReport core={core} /> : null}
    </Stack>
  );
}
