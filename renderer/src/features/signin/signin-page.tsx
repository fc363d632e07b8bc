import { Alert, Center, Paper, Stack, Text, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';

import {
  CredentialFields,
  safeNext,
  type CredentialStep,
} from '../../components/ui/credential-fields.js';
import { errorText } from '../../components/ui/feedback.js';
import { useSession } from '../../lib/session.js';
import { signIn } from './signin-api.js';

export function Page() {
  const [params] = useSearchParams();
  const expiredAt = useSession((s) => s.expiredAt);
  const navigate = useNavigate();
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [totp, setTotp] = useState('');
  const [step, setStep] = useState<CredentialStep>('password');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const next = safeNext(params.get('next') ?? expiredAt);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await signIn(login, password, step === 'totp' ? totp : undefined);
      if (result.kind === 'totp-required') {
        setStep('totp');
        return;
      }
      useSession.getState().signIn(result.token, result.user);
      void navigate(next, { replace: true });
    } catch (err) {
      setError(errorText(err));
      if (step === 'totp') setTotp('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="lg" w={340} component="main">
        <form onSubmit={(e) => void submit(e)} aria-label="Sign in">
          <Stack gap="sm">
            <Title order={1}>Sign in</Title>
            <Text size="sm" c="dimmed">
              Network monitoring appliance
            </Text>
            {expiredAt && !error ? (
              <Alert color="yellow" variant="light" data-testid="session-ended">
                Your session has ended. Sign in to return to the page you were on.
              </Alert>
            ) : null}
            {error ? (
              <Alert color="red" variant="light" role="alert" data-testid="signin-error">
                {error}
              </Alert>
            ) : null}
            <CredentialFields
              step={step}
              login={login}
              password={password}
              totp={totp}
              busy={busy}
              onLogin={setLogin}
              onPassword={setPassword}
              onTotp={setTotp}
              onBack={() => {
                setStep('password');
                setTotp('');
              }}
            />
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
