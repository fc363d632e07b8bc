/**
 * The device page's flow summary: `netflow: {bytes, count, top_partners}` of
 * GET /api/device/{device} over the page's window (flows where the device's address is either
 * end, from the conversation rollup), its top partners as bars, and a link to the flow list
 * filtered by the device's address (shown to callers with `vne`, who may open it).
 */
import { Button, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

import { useCaller } from '../../lib/caller.js';
import { formatBytes } from '../../lib/format.js';
import { endpointName, flowListHref } from './flow-model.js';
import type { DeviceFlowSummary, FlowPartner } from './flows-api.js';
import { BarList } from './bar-list.js';

/** The summary as the device record carries it; only well-formed partners are kept (an older appliance typed them loosely). */
export function flowSummaryOf(netflow: {
  bytes: number;
  count: number;
  top_partners: unknown[];
}): DeviceFlowSummary {
  const partners = netflow.top_partners.filter(
    (p): p is FlowPartner =>
      typeof p === 'object' &&
      p !== null &&
      typeof (p as FlowPartner).ip === 'string' &&
      typeof (p as FlowPartner).bytes === 'number',
  );
  return { bytes: netflow.bytes, count: netflow.count, top_partners: partners };
}

export function DeviceFlowsPanel({ ip, summary }: { ip: string; summary: DeviceFlowSummary }) {
  const caller = useCaller();
  const href = flowListHref({ ip }, true);
  return (
    <Stack gap="sm" data-testid="device-flows">
      <Paper withBorder p="sm">
        <Group justify="space-between" wrap="wrap">
          <Group gap="xl">
            <div>
              <Text size="xs" c="dimmed">
                Traffic in the window
              </Text>
              <Text fw={700} size="lg" data-testid="device-flow-bytes">
                {formatBytes(summary.bytes)}
              </Text>
            </div>
            <div>
              <Text size="xs" c="dimmed">
                Flows
              </Text>
              <Text fw={700} size="lg" data-testid="device-flow-count">
                {summary.count.toLocaleString()}
              </Text>
            </div>
          </Group>
          {caller.can('vne') ? (
            <Button variant="default" component={Link} to={href} data-testid="device-flow-link">
              Flows of {ip}
            </Button>
          ) : null}
        </Group>
        <Text size="xs" c="dimmed" mt={6}>
          Flows whose source or destination is this device’s address, as exporters reported them.
        </Text>
      </Paper>
      {summary.count === 0 ? (
        <Paper withBorder p="sm">
          <Title order={2}>Top partners</Title>
          <Text size="sm" c="dimmed">
            No flows of this address in the window. Routers and switches on its path send NetFlow or
            IPFIX to the appliance’s flow port.
          </Text>
        </Paper>
      ) : (
        <BarList
          title="Top partners"
          testId="device-flow-partners"
          bars={summary.top_partners.map((p) => ({
            key: p.ip,
            label: endpointName(p.ip, p.host),
            bytes: p.bytes,
            detail: `${formatBytes(p.bytes)} with ${ip}`,
            filters: { ip: [ip, p.ip] },
          }))}
        />
      )}
    </Stack>
  );
}
