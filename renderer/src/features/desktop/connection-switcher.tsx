/** The header's appliance switcher (desktop app): each connection keeps its own cache and sign-in. */
import { Badge, Group, Select, Tooltip } from '@mantine/core';
import { useNavigate } from 'react-router';

import { useActiveConnection } from '../../lib/active-connection.js';
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
            label: c.kind === 'embedded' ? `${c.name} (this computer)` : c.name,
          })),
          { value: MANAGE, label: 'Manage appliances…' },
        ]}
        onChange={(value) => {
          if (!value || value === active) return;
          if (value === MANAGE) {
            void navigate('/desktop/connections');
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
