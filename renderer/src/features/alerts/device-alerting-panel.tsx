/**
 * The device page's "Alerting" tab (permission `alerts`): the device's parent for
 * dependency-aware suppression (designed `GET/POST /api/alert-dependencies/{device}`: a device
 * behind a down parent opens no incident of its own), its legacy alerts, and the device-down alert
 * of its latency tracker (`POST /api/legacy-alerts`, answered with the existing one if there is).
 */
import { Badge, Button, Group, Paper, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { ErrorNotice, RowsSkeleton } from '../../components/ui/feedback.js';
import { latencyTrackerOf } from '../../lib/device-api.js';
import { devicesQuery } from '../../lib/devices-api.js';
import { formatTime } from '../../lib/format.js';
import { alertKeys, createLegacyAlert, legacyQuery, parentQuery, setParent } from './alerts-api.js';
import { toastError, toastOk } from './alerts-ui.js';

export function DeviceAlertingPanel({ deviceId }: { deviceId: number }) {
  const queryClient = useQueryClient();
  const parent = useQuery(parentQuery(deviceId));
  const devices = useQuery(devicesQuery());
  const legacy = useQuery(legacyQuery);
  const tracker = useQuery(latencyTrackerOf(deviceId));
  const [chosen, setChosen] = useState<string | null | undefined>(undefined);
  const current = parent.data?.parent_id != null ? String(parent.data.parent_id) : null;
  const value = chosen === undefined ? current : chosen;
  const saveParent = useMutation({
    mutationFn: () => setParent(deviceId, value === null ? null : Number(value)),
    onSuccess: (answer) => {
      queryClient.setQueryData(alertKeys.parent(deviceId), answer);
      setChosen(undefined);
      toastOk(answer.parent_id === null ? 'Parent cleared.' : 'Parent saved.');
    },
    onError: toastError,
  });
  const addDown = useMutation({
    mutationFn: (trackerId: number) => createLegacyAlert(trackerId, 2),
    onSuccess: () => {
      toastOk('Device-down alert on.');
      void queryClient.invalidateQueries({ queryKey: alertKeys.legacy });
    },
    onError: toastError,
  });
  const mine = (legacy.data ?? []).filter((l) => l.device_id === deviceId);
  const hasDown = mine.some((l) => l.type === 'device_down');
  return (
    <Stack gap="sm">
      <Paper withBorder p="sm">
        <Title order={2} mb={4}>
          Depends on
        </Title>
        <Text size="sm" c="dimmed" mb="xs">
          While the parent is down, this device opens no device-down incident of its own (one
          incident for the parent, not one per child).
        </Text>
        {parent.isError ? (
          <ErrorNotice error={parent.error} />
        ) : (
          <Group align="flex-end" gap="xs">
            <Select
              label="Parent device"
              placeholder="none"
              searchable
              clearable
              w={320}
              data={(devices.data ?? [])
                .filter((d) => d.id !== deviceId)
                .map((d) => ({ value: String(d.id), label: `${d.label} (${d.ip_address})` }))}
              value={value}
              onChange={(v) => setChosen(v)}
              disabled={parent.isPending}
            />
            <Button
              onClick={() => saveParent.mutate()}
              loading={saveParent.isPending}
              disabled={value === current}
            >
              Save parent
            </Button>
          </Group>
        )}
      </Paper>
      <Paper withBorder p="sm">
        <Group justify="space-between" mb={4}>
          <Title order={2}>Legacy alerts of this device</Title>
          {tracker.data && !hasDown ? (
            <Button
              variant="default"
              loading={addDown.isPending}
              onClick={() => tracker.data && addDown.mutate(tracker.data.id)}
            >
              Alert when it goes down
            </Button>
          ) : null}
        </Group>
        {legacy.isError ? (
          <ErrorNotice error={legacy.error} />
        ) : legacy.isPending ? (
          <RowsSkeleton rows={2} />
        ) : mine.length === 0 ? (
          <Text size="sm" c="dimmed">
            None.{' '}
            {tracker.data === null ? 'A latency tracker is needed for a device-down alert.' : ''}
          </Text>
        ) : (
          <Table aria-label="Legacy alerts of this device">
            <Table.Tbody>
              {mine.map((l) => (
                <Table.Tr key={l.id}>
                  <Table.Td>
                    #{l.id} {l.type}
                    {l.active ? null : (
                      <Badge ml={4} size="xs" color="gray">
                        off
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>{l.tracker_kind} tracker</Table.Td>
                  <Table.Td>
                    {l.last_fired_at ? `fired ${formatTime(l.last_fired_at)}` : 'never fired'}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        <Text size="xs" mt="xs">
          Windows, router configuration and routing: <Link to="/alerts/legacy">Legacy alerts</Link>
        </Text>
      </Paper>
    </Stack>
  );
}
