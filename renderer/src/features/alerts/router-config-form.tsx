/**
 * The router configuration of one alert, modern or legacy (`/api/alerts/{source}/{id}/router-config`):
 * severity 1 to 5 and the renotify/throttle values (>= 0; stored, returned, inert), 422 `{errors}`.
 */
import { Alert, Button, Group, NumberInput, SegmentedControl, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { ApiError } from '../../lib/api-error.js';
import { formErrors } from './alert-model.js';
import {
  alertKeys,
  routerConfigQuery,
  saveRouterConfig,
  type RouterConfig,
  type Source,
} from './alerts-api.js';
import { toastOk } from './alerts-ui.js';

const ROUTER_FIELDS: { key: keyof RouterConfig; label: string }[] = [
  { key: 'renotify_minutes', label: 'Renotify after (minutes)' },
  { key: 'throttle_flip_count', label: 'Throttle: state changes' },
  { key: 'throttle_flip_window_minutes', label: 'Throttle: window (minutes)' },
  { key: 'throttle_stable_minutes', label: 'Throttle: stable for (minutes)' },
];

/** The router configuration of one alert, modern or legacy. */
export function RouterConfigForm({
  source,
  id,
  onClose,
}: {
  source: Source;
  id: number;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const config = useQuery(routerConfigQuery(source, id));
  const [d, setD] = useState<Record<string, number | string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<string | null>(null);
  useEffect(() => {
    if (config.data) setD({ ...config.data });
  }, [config.data]);
  const save = useMutation({
    mutationFn: () =>
      saveRouterConfig(source, id, {
        severity: Number(d.severity),
        renotify_minutes: Number(d.renotify_minutes),
        throttle_flip_count: Number(d.throttle_flip_count),
        throttle_flip_window_minutes: Number(d.throttle_flip_window_minutes),
        throttle_stable_minutes: Number(d.throttle_stable_minutes),
      }),
    onSuccess: (answer) => {
      toastOk(answer.message || 'Router configuration saved.');
      void queryClient.invalidateQueries({ queryKey: alertKeys.all });
      onClose();
    },
    onError: (err) => {
      setErrors(err instanceof ApiError ? formErrors(err.fields) : {});
      setRefusal(errorText(err));
    },
  });
  if (config.isError) return <ErrorNotice error={config.error} />;
  if (config.isPending) return <RowsSkeleton rows={4} />;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack gap="sm">
        {refusal ? (
          <Alert color="red" variant="light" role="alert">
            {refusal}
          </Alert>
        ) : null}
        <div>
          <Text size="sm" fw={500} mb={4}>
            Severity
          </Text>
          <SegmentedControl
            aria-label="Severity"
            data={['1', '2', '3', '4', '5']}
            value={String(d.severity ?? 3)}
            onChange={(v) => setD({ ...d, severity: Number(v) })}
          />
          {errors.severity ? (
            <Text size="xs" c="red">
              {errors.severity}
            </Text>
          ) : null}
        </div>
        <Group grow>
          {ROUTER_FIELDS.map((f) => (
            <NumberInput
              key={f.key}
              label={f.label}
              min={0}
              allowDecimal={false}
              value={d[f.key] ?? 0}
              error={errors[f.key]}
              onChange={(v) => setD({ ...d, [f.key]: v })}
            />
          ))}
        </Group>
        <Text size="xs" c="dimmed">
          Renotify and throttle values are stored and returned for compatibility; they never change
          delivery (no reminders, no recovery notices). Flap control below holds back flapping
          legacy alerts.
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
