/**
 * The mail relay (`POST /api/smtpSettings`, permission `system`): `get` fills the form (the
 * password comes back as the sentinel and shows as "stored"), `set` saves (an empty password
 * field sends the sentinel, which keeps the stored one), `test` sends a real mail. Failures are
 * HTTP 200 with `hasError`; the client turns them into the appliance's message.
 */
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Group,
  NumberInput,
  Paper,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { ErrorNotice, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { isSentinel, SENTINEL } from './alert-model.js';
import { alertKeys, smtpAction, smtpQuery, type SmtpBody, type SmtpView } from './alerts-api.js';
import { Gate } from './alerts-ui.js';

export interface RelayDraft {
  sender: string;
  email: string;
  smtpserver: string;
  port: number | string;
  auth: boolean;
  usessl: boolean;
  authname: string;
  authpass: string;
  passwordStored: boolean;
}

export function relayDraft(v: SmtpView | undefined): RelayDraft {
  return {
    sender: v?.sender ?? '',
    email: v?.email ?? '',
    smtpserver: v?.server ?? '',
    port: v?.port ?? 587,
    auth: v?.auth ?? false,
    usessl: v?.usessl ?? false,
    authname: v?.authname ?? '',
    authpass: '',
    passwordStored: isSentinel(v?.authpass),
  };
}

/** The `set` body: an untouched stored password is kept by sending the sentinel. */
export function relayBody(d: RelayDraft): SmtpBody {
  return {
    action: 'set',
    sender: d.sender.trim(),
    email: d.email.trim(),
    smtpserver: d.smtpserver.trim(),
    port: Number(d.port),
    auth: d.auth,
    usessl: d.usessl,
    authname: d.authname,
    authpass: d.authpass !== '' ? d.authpass : d.passwordStored ? SENTINEL : '',
  };
}

export function RelayForm({ initial }: { initial: RelayDraft }) {
  const queryClient = useQueryClient();
  const [d, setD] = useState(initial);
  const [to, setTo] = useState('');
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  useEffect(() => setD(initial), [initial]);
  const set = (patch: Partial<RelayDraft>) => setD((x) => ({ ...x, ...patch }));
  const run = useMutation({
    mutationFn: (body: SmtpBody) => smtpAction(body),
    onSuccess: (answer, body) => {
      setResult({ ok: true, text: typeof answer.smtp === 'string' ? answer.smtp : 'Done.' });
      if (body.action === 'set') void queryClient.invalidateQueries({ queryKey: alertKeys.smtp });
    },
    onError: (err) => setResult({ ok: false, text: errorText(err) }),
  });
  const missing =
    d.sender.trim() === '' ||
    d.email.trim() === '' ||
    d.smtpserver.trim() === '' ||
    !(Number(d.port) >= 1 && Number(d.port) <= 65535);
  return (
    <form
      aria-label="Mail relay"
      onSubmit={(e) => {
        e.preventDefault();
        setResult(null);
        run.mutate(relayBody(d));
      }}
    >
      <Stack gap="sm">
        {result ? (
          <Alert
            color={result.ok ? 'teal' : 'red'}
            variant="light"
            role={result.ok ? 'status' : 'alert'}
            data-testid="relay-result"
          >
            {result.text}
          </Alert>
        ) : null}
        <Group grow align="flex-start">
          <TextInput
            label="Sender name"
            required
            value={d.sender}
            onChange={(e) => set({ sender: e.currentTarget.value })}
          />
          <TextInput
            label="From address"
            required
            type="email"
            value={d.email}
            onChange={(e) => set({ email: e.currentTarget.value })}
          />
        </Group>
        <Group grow align="flex-start">
          <TextInput
            label="Relay server"
            required
            value={d.smtpserver}
            onChange={(e) => set({ smtpserver: e.currentTarget.value })}
          />
          <NumberInput
            label="Port"
            required
            min={1}
            max={65535}
            allowDecimal={false}
            value={d.port}
            onChange={(v) => set({ port: v })}
          />
        </Group>
        <Group>
          <Checkbox
            label="Use TLS"
            checked={d.usessl}
            onChange={(e) => set({ usessl: e.currentTarget.checked })}
          />
          <Checkbox
            label="Authenticate"
            checked={d.auth}
            onChange={(e) => set({ auth: e.currentTarget.checked })}
          />
        </Group>
        {d.auth ? (
          <Group grow align="flex-start">
            <TextInput
              label="User name"
              autoComplete="off"
              value={d.authname}
              onChange={(e) => set({ authname: e.currentTarget.value })}
            />
            <PasswordInput
              label="Password"
              autoComplete="new-password"
              description={
                d.passwordStored
                  ? 'A password is stored (never shown). Leave empty to keep it.'
                  : undefined
              }
              placeholder={d.passwordStored ? 'stored' : ''}
              value={d.authpass}
              onChange={(e) => set({ authpass: e.currentTarget.value })}
            />
          </Group>
        ) : null}
        {d.passwordStored && d.authpass === '' ? (
          <Group gap={6}>
            <Badge variant="light" data-testid="password-stored">
              password stored
            </Badge>
          </Group>
        ) : null}
        <Group justify="space-between" align="flex-end">
          <Group align="flex-end" gap="xs">
            <TextInput
              label="Send a test mail to"
              description="Empty: the From address"
              type="email"
              value={to}
              onChange={(e) => setTo(e.currentTarget.value)}
              w={260}
            />
            <Button
              variant="default"
              loading={run.isPending && run.variables?.action === 'test'}
              onClick={() => {
                setResult(null);
                run.mutate({
                  ...relayBody(d),
                  action: 'test',
                  ...(to.trim() ? { to: to.trim() } : {}),
                });
              }}
            >
              Send test
            </Button>
          </Group>
          <Button
            type="submit"
            disabled={missing}
            loading={run.isPending && run.variables?.action === 'set'}
          >
            Save relay
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function RelayContent() {
  const smtp = useQuery(smtpQuery);
  const [initial, setInitial] = useState<RelayDraft | null>(null);
  useEffect(() => {
    if (smtp.data) setInitial(relayDraft(smtp.data));
  }, [smtp.data]);
  return (
    <Stack gap="sm">
      <PageHeader title="Mail relay" subtitle="How the appliance sends email" />
      <Paper withBorder p="sm" maw={760}>
        <Title order={2} mb={4}>
          SMTP relay
        </Title>
        <Text size="sm" c="dimmed" mb="sm">
          Email outlets and the test below go through this relay.
        </Text>
        {smtp.isError ? (
          <ErrorNotice error={smtp.error} onRetry={() => void smtp.refetch()} />
        ) : !initial ? (
          <RowsSkeleton rows={5} />
        ) : (
          <RelayForm initial={initial} />
        )}
      </Paper>
    </Stack>
  );
}

export function Page() {
  return (
    <Gate permission="system" title="Mail relay">
      <RelayContent />
    </Gate>
  );
}
