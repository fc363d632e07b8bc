/**
 * Sign-in in the desktop window: through IPC, never through the proxy (main talks to the
 * appliance and keeps the tokens). Username and password, then the TOTP code when the appliance
 * asks; or the OAuth device flow: the code and the verification URL (on the appliance's own
 * origin) are shown, and the URL opens in the system browser, never in this window.
 */
import {
  Alert,
  Button,
  Center,
  Code,
  Divider,
  List,
  Paper,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';

import {
  DEVICE_FLOW_FAILURE_CAUSES,
  type DeviceFlowStart,
} from '../../../../electron/contract/bridge.js';
import {
  CredentialFields,
  safeNext,
  type CredentialStep,
} from '../../components/ui/credential-fields.js';
import { useActiveConnection } from '../../lib/active-connection.js';
import { useSession } from '../../lib/session.js';
import { ConnectionSwitcher } from './connection-switcher.js';
import { bridgeOrThrow, unwrap } from './desktop-start.js';
import { useDesktop } from './desktop-store.js';
import { StorageWarning } from './storage-warning.js';

type DeviceState =
  | { phase: 'idle' }
  | { phase: 'waiting'; flow: DeviceFlowStart }
  | { phase: 'failed'; message: string; causes: readonly string[] };

function DeviceFlow({
  connectionId,
  onSignedIn,
}: {
  connectionId: string;
  onSignedIn: () => void;
}) {
  const bridge = bridgeOrThrow();
  const [state, setState] = useState<DeviceState>({ phase: 'idle' });
  const [busy, setBusy] = useState(false);
  const [openError, setOpenError] = useState<string | null>(null);
  const flowId = useRef<string | null>(null);

  useEffect(
    () => () => {
      if (flowId.current) void bridge.auth.cancelDeviceFlow({ flowId: flowId.current });
    },
    [bridge],
  );

  const start = async () => {
    setBusy(true);
    setOpenError(null);
    try {
      const flow = await unwrap(bridge.auth.startDeviceFlow({ connectionId }));
      flowId.current = flow.flowId;
      setState({ phase: 'waiting', flow });
      const result = await unwrap(bridge.auth.waitDeviceFlow({ flowId: flow.flowId }));
      flowId.current = null;
      if (result.status === 'signed-in') onSignedIn();
      else if (result.status === 'expired')
        setState({
          phase: 'failed',
          message: 'The appliance gave no sign-in for this code.',
          causes: result.causes,
        });
      else if (result.status === 'denied')
        setState({
          phase: 'failed',
          message: 'The sign-in was denied on the appliance.',
          causes: [],
        });
      else setState({ phase: 'idle' });
    } catch (err) {
      flowId.current = null;
      setState({
        phase: 'failed',
        message: err instanceof Error ? err.message : String(err),
        causes: DEVICE_FLOW_FAILURE_CAUSES,
      });
    } finally {
      setBusy(false);
    }
  };

  if (state.phase === 'waiting') {
    const { flow } = state;
    return (
      <Stack gap="xs" data-testid="device-flow">
        <Text size="sm">
          On the appliance&apos;s sign-in page, in your browser, enter this code:
        </Text>
        <Code block fz="xl" ta="center" fw={700} data-testid="device-user-code">
          {flow.userCode}
        </Code>
        <Text size="sm">
          at{' '}
          <Text span ff="monospace" size="sm" data-testid="device-verification-uri">
            {flow.verificationUri}
          </Text>
        </Text>
        <Button
          variant="light"
          data-testid="device-open-browser"
          onClick={() => {
            setOpenError(null);
            void unwrap(bridge.shell.openExternal({ url: flow.verificationUriComplete })).catch(
              (err: unknown) => setOpenError(err instanceof Error ? err.message : String(err)),
            );
          }}
        >
          Open in the browser
        </Button>
        {openError ? (
          <Alert color="red" variant="light">
            {openError}
          </Alert>
        ) : null}
        <Text size="xs" c="dimmed">
          Waiting for approval; the code is valid for {Math.round(flow.expiresInSeconds / 60)}{' '}
          minutes.
        </Text>
        <Button
          variant="subtle"
          onClick={() => {
            if (flowId.current) void bridge.auth.cancelDeviceFlow({ flowId: flowId.current });
          }}
        >
          Cancel
        </Button>
      </Stack>
    );
  }
  return (
    <Stack gap="xs">
      {state.phase === 'failed' ? (
        <Alert color="red" variant="light" role="alert" data-testid="device-flow-failed">
          <Text size="sm">{state.message}</Text>
          {state.causes.length > 0 ? (
            <>
              <Text size="sm" mt={4}>
                The appliance answers the same for each of these causes:
              </Text>
              <List size="sm" data-testid="device-flow-causes">
                {state.causes.map((cause) => (
                  <List.Item key={cause}>{cause}</List.Item>
                ))}
              </List>
            </>
          ) : null}
        </Alert>
      ) : null}
      <Button
        variant="default"
        onClick={() => void start()}
        loading={busy}
        data-testid="device-flow-start"
      >
        Sign in with a browser (device code)
      </Button>
    </Stack>
  );
}

export function Page() {
  const [params] = useSearchParams();
  const expiredAt = useSession((s) => s.expiredAt);
  const token = useSession((s) => s.token);
  const connectionId = useActiveConnection((s) => s.connectionId);
  const connection = useDesktop((s) => s.connections.find((c) => c.id === connectionId));
  const navigate = useNavigate();
  const bridge = bridgeOrThrow();
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [totp, setTotp] = useState('');
  const [step, setStep] = useState<CredentialStep>('password');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const next = safeNext(params.get('next') ?? expiredAt);

  if (!connectionId) return null;
  // Switched to an appliance main is already signed in to: back to the page.
  if (token) return <Navigate to={next} replace />;
  const signedIn = (user: { id: number; email: string; name: string } | null) => {
    useSession.getState().signInDesktop(connectionId, user);
    void navigate(next, { replace: true });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await unwrap(
        bridge.auth.signIn({
          connectionId,
          username: login,
          password,
          ...(step === 'totp' ? { totp } : {}),
        }),
      );
      if (result.status === 'signed-in') return signedIn(result.user);
      if (result.status === 'totp-required') return setStep('totp');
      if (result.status === 'rate-limited')
        setError(
          `Too many attempts. Try again${result.retryAfterSeconds ? ` in ${result.retryAfterSeconds} s` : ' later'}.`,
        );
      else setError(result.message);
      if (step === 'totp') setTotp('');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="lg" w={400} component="main">
        <Stack gap="sm">
          <Title order={1}>Sign in</Title>
          <ConnectionSwitcher />
          <Text size="sm" c="dimmed" data-testid="signin-origin">
            {connection ? connection.origin : ''}
          </Text>
          <StorageWarning />
          {expiredAt && !error ? (
            <Alert color="yellow" variant="light" data-testid="session-ended">
              Your session has ended. Sign in to return to the page you were on.
            </Alert>
          ) : null}
          <form onSubmit={(e) => void submit(e)} aria-label="Sign in">
            <Stack gap="sm">
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
          <Divider label="or" />
          <DeviceFlow connectionId={connectionId} onSignedIn={() => signedIn(null)} />
          <Text size="xs" c="dimmed">
            The account needs the <Code>api</Code> (or <Code>sa</Code>) permission.
          </Text>
        </Stack>
      </Paper>
    </Center>
  );
}
