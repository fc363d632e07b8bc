/** The header's appliance switcher (desktop app): each connection keeps its own cache and sign-in. */
import { Badge, Group, Select, Tooltip } from '@mantine/core';
import { useNavigate } from 'react-router';

import { EMBEDDED_CONNECTION_ID } from '../../../../electron/contract/bridge.js';
import { useActiveConnection } from '../../lib/active-connection.js';
import { useSession } from '../../lib/session.js';
import { switchConnection } from './desktop-start.js';
import { useDesktop } from './desktop-store.js';

const MANAGE = '__manage__';

export function ConnectionSwitcher() {
  const connections = useDesktop((s) => s.connections);
  const active = useActiveConnection((s) => s.connectionId);
  const navigate = useNavigate();
  const current = connections.find((c) => c.id === active);
  return (
    <Group gap={6} wrap="nowrap">
      <Select
        aria-label="Appliance"
        data-testid="connection-switcher"
        size="xs"
        w={220}
        allowDeselect={false}
        value={active}
        data={[
          ...connections.map((c) => ({
            value: c.id,
            label:
              c.kind === 'embedded' && !/this computer/i.test(c.name)
                ? `${c.name} (this computer)`
                : c.name,
          })),
          { value: MANAGE, label: 'Manage appliances…' },
        ]}
        onChange={(value) => {
          if (!value || value === active) return;
          if (value === MANAGE) {
            // The page lives in the signed-in frame: from a signed-out appliance's sign-in page,
            // go through this computer's appliance (main signs in to it by itself).
            const via = useSession.getState().token
              ? Promise.resolve()
              : switchConnection(EMBEDDED_CONNECTION_ID);
            void via.then(() => navigate('/desktop/connections'));
            return;
          }
          // The overview of the other appliance (the shell sends to sign-in when needed).
          void switchConnection(value).then(() => navigate('/'));
        }}
      />
      {current && !current.signedIn ? (
        <Tooltip label="Not signed in to this appliance">
          <Badge color="yellow" variant="light" size="sm">
            signed out
          </Badge>
        </Tooltip>
      ) : null}
    </Group>
  );
}
