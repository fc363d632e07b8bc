/**
 * The two steps of a password sign-in, shared by the web console's page and the desktop window's:
 * username and password, then the 6-digit TOTP code when the appliance asks for it (with a way
 * back to the first step). The page owns the state and the submit; this renders the fields and
 * the buttons inside the page's form.
 */
import { Button, PasswordInput, PinInput, Stack, Text, TextInput } from '@mantine/core';

export type CredentialStep = 'password' | 'totp';

export interface CredentialFieldsProps {
  step: CredentialStep;
  login: string;
  password: string;
  totp: string;
  busy: boolean;
  onLogin: (value: string) => void;
  onPassword: (value: string) => void;
  onTotp: (value: string) => void;
  /** Back from the code to the password step. */
  onBack: () => void;
}

/** A path of this console to return to after sign-in: never an absolute or protocol-relative URL. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function CredentialFields(props: CredentialFieldsProps) {
  const { step, busy } = props;
  return (
    <>
      {step === 'password' ? (
        <>
          <TextInput
            label="Username or email"
            name="username"
            autoComplete="username"
            required
            autoFocus
            value={props.login}
            onChange={(e) => props.onLogin(e.currentTarget.value)}
          />
          <PasswordInput
            label="Password"
            name="password"
            autoComplete="current-password"
            required
            value={props.password}
            onChange={(e) => props.onPassword(e.currentTarget.value)}
          />
        </>
      ) : (
        <Stack gap={4}>
          <Text size="sm" id="totp-label">
            Enter the 6-digit code from your authenticator app.
          </Text>
          <PinInput
            length={6}
            type="number"
            oneTimeCode
            autoFocus
            value={props.totp}
            onChange={props.onTotp}
            aria-label="Authentication code"
            data-testid="totp"
          />
        </Stack>
      )}
      <Button type="submit" loading={busy} fullWidth size="sm">
        {step === 'password' ? 'Sign in' : 'Verify'}
      </Button>
      {step === 'totp' ? (
        <Button variant="subtle" onClick={props.onBack}>
          Back
        </Button>
      ) : null}
    </>
  );
}
