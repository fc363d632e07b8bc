/**
 * Time (spec part 3, Appliance settings; permission `system`): the appliance's clock (`time`,
 * Unix seconds, shown in the chosen zone and ticking), its zone from the system's zone database
 * (`tzs`), and either NTP servers (space-separated host names or addresses) or a manual time
 * (ISO 8601). In dry run the answer says nothing was applied, and the page shows that.
 */
import {
  Button,
  Group,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { setTime, settingsKeys, timeQuery, type SetTimeBody } from './settings-api.js';
import { isIso8601, ntpServers } from './settings-model.js';
import { Gated, OutcomeNotice, type Outcome } from './settings-shared.js';

/** `seconds` as the wall clock of `tz` (the zone's own name when the browser does not know it). */
export function clockIn(seconds: number, tz: string): string {
  const date = new Date(seconds * 1000);
  try {
    return new Intl.DateTimeFormat('en-GB', {
      timeZone: tz,
      dateStyle: 'medium',
      timeStyle: 'medium',
    }).format(date);
  } catch {
    return `${date.toISOString().replace('.000Z', 'Z')} (UTC)`;
  }
}

export interface TimeFormValue {
  type: 'ntp' | 'manual';
  tz: string;
  ntpserver: string;
  manual: string;
}

/** The body setTimeSettings takes, or the message of the first field that is wrong. */
export function timeBody(form: TimeFormValue): { body: SetTimeBody } | { error: string } {
  if (!form.tz) return { error: 'Choose a time zone' };
  if (form.type === 'ntp') {
    const servers = ntpServers(form.ntpserver);
    if (!servers) return { error: 'Name at least one NTP server' };
    return { body: { type: 'ntp', tz: form.tz, ntpserver: servers } };
  }
  if (!isIso8601(form.manual))
    return { error: 'The time must be ISO 8601, for example 2026-12-04T22:40:00Z' };
  return { body: { type: 'manual', tz: form.tz, manual: form.manual.trim() } };
}

/** The time form; exported for its test. */
export function TimeForm({
  initial,
  tzs,
  saving,
  error,
  onSubmit,
}: {
  initial: TimeFormValue;
  tzs: readonly string[];
  saving?: boolean;
  error?: string | null;
  onSubmit: (body: SetTimeBody) => void;
}) {
  const [form, setForm] = useState(initial);
  const [hint, setHint] = useState<string | null>(null);
  const set = <K extends keyof TimeFormValue>(key: K, value: TimeFormValue[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setHint(null);
  };
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        const result = timeBody(form);
        if ('error' in result) setHint(result.error);
        else onSubmit(result.body);
      }}
    >
      <Stack gap="xs" maw={520}>
        <Select
          label="Time zone"
          data={tzs}
          value={form.tz}
          searchable
          limit={200}
          allowDeselect={false}
          nothingFoundMessage="No such zone"
          onChange={(v) => v && set('tz', v)}
        />
        <SegmentedControl
          aria-label="Time source"
          value={form.type}
          onChange={(v) => set('type', v as TimeFormValue['type'])}
          data={[
            { value: 'ntp', label: 'NTP servers' },
            { value: 'manual', label: 'Manual time' },
          ]}
        />
        {form.type === 'ntp' ? (
          <TextInput
            label="Servers"
            description="NTP servers: host names or IP addresses separated by spaces (at most 8)"
            value={form.ntpserver}
            onChange={(e) => set('ntpserver', e.currentTarget.value)}
          />
        ) : (
          <TextInput
            label="Time (ISO 8601)"
            description="For example 2026-12-04T22:40:00Z or 2026-12-04 23:40+01:00; without an offset it is UTC. NTP is turned off."
            placeholder="2026-12-04T22:40:00Z"
            value={form.manual}
            onChange={(e) => set('manual', e.currentTarget.value)}
          />
        )}
        {hint || error ? (
          <Text c="var(--mantine-color-error)" size="sm" role="alert">
            {hint ?? error}
          </Text>
        ) : null}
        <Group>
          <Button type="submit" loading={saving}>
            Save time settings
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function Clock({ seconds, fetchedAt, tz }: { seconds: number; fetchedAt: number; tz: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const current = seconds + Math.max(0, Math.floor((now - fetchedAt) / 1000));
  return (
    <Text size="lg" className="console-mono" data-testid="appliance-clock">
      {clockIn(current, tz)}{' '}
      <Text span c="dimmed" size="sm">
        ({tz})
      </Text>
    </Text>
  );
}

function TimeSettings() {
  const queryClient = useQueryClient();
  const time = useQuery(timeQuery);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const save = useMutation({
    mutationFn: setTime,
    onSuccess: (answer) => {
      setOutcome({
        ok: true,
        warn: answer.dry_run,
        title: answer.dry_run ? 'Dry run: the host clock was not changed' : 'Time settings saved',
        message: answer.message,
      });
      void queryClient.invalidateQueries({ queryKey: settingsKeys.time });
    },
    onError: () => setOutcome(null),
  });
  return (
    <Stack gap="sm">
      <PageHeader title="Time" subtitle="The appliance's clock, zone and time source" />
      <OutcomeNotice outcome={outcome} onClose={() => setOutcome(null)} />
      <Paper withBorder p="sm">
        {time.isError ? (
          <ErrorNotice error={time.error} onRetry={() => void time.refetch()} />
        ) : time.isPending ? (
          <RowsSkeleton rows={4} />
        ) : (
          <Stack gap="sm">
            <Clock seconds={time.data.time} fetchedAt={time.dataUpdatedAt} tz={time.data.tz} />
            <TimeForm
              key={time.dataUpdatedAt}
              tzs={time.data.tzs}
              initial={{
                type: time.data.type,
                tz: time.data.tz,
                ntpserver: time.data.ntpserver ?? '',
                manual: '',
              }}
              saving={save.isPending}
              error={save.isError ? errorText(save.error) : null}
              onSubmit={(body) => save.mutate(body)}
            />
          </Stack>
        )}
      </Paper>
    </Stack>
  );
}

export function Page() {
  return (
    <Gated permission="system" title="Time">
      <TimeSettings />
    </Gated>
  );
}
