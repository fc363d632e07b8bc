/**
 * Pieces the alerting pages share: the permission gate, the confirmation dialog for deletes and
 * restores, the sub-navigation between the alerting pages, and toasts with the API's words.
 */
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useLocation } from 'react-router';

import { EmptyState, errorText, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller, type Permission } from '../../lib/caller.js';

export const toastOk = (message: string) => notifications.show({ color: 'teal', message });
export const toastError = (err: unknown) =>
  notifications.show({ color: 'red', title: 'The appliance refused', message: errorText(err) });

/** The alerting pages, in the order of the sub-navigation. */
export const ALERT_PAGES = [
  { path: '/alerts', label: 'Alerts' },
  { path: '/alerts/history', label: 'History' },
  { path: '/alerts/outlets', label: 'Outlets and routing' },
  { path: '/alerts/templates', label: 'Classes and templates' },
  { path: '/alerts/windows', label: 'Maintenance windows' },
  { path: '/alerts/legacy', label: 'Legacy alerts' },
] as const;

export function AlertsNav() {
  const location = useLocation();
  return (
    <Group gap={4} mb="sm" component="nav" aria-label="Alerting pages" wrap="wrap">
      {ALERT_PAGES.map((p) => {
        const current = location.pathname === p.path;
        return (
          <Button
            key={p.path}
            component={Link}
            to={p.path}
            size="xs"
            variant={current ? 'light' : 'subtle'}
            aria-current={current ? 'page' : undefined}
          >
            {p.label}
          </Button>
        );
      })}
    </Group>
  );
}

/** Renders the page only for callers holding the permission; says which one is missing. */
export function Gate({
  permission,
  title,
  children,
}: {
  permission: Permission;
  title: string;
  children: ReactNode;
}) {
  const caller = useCaller();
  if (caller.loading) return <RowsSkeleton />;
  if (!caller.can(permission))
    return (
      <>
        <PageHeader title={title} />
        <EmptyState title={`The ${permission} permission is needed`} />
      </>
    );
  return <>{children}</>;
}

export interface ConfirmState {
  title: string;
  text: ReactNode;
  confirm: string;
  action: () => Promise<unknown>;
}

/** A confirmation dialog; the action runs on Confirm and the dialog closes when it settles. */
export function ConfirmDialog({
  state,
  busy,
  onClose,
  onConfirm,
}: {
  state: ConfirmState | null;
  busy: boolean;
  onClose: () => void;
  onConfirm: (state: ConfirmState) => void;
}) {
  return (
    <Modal opened={state !== null} onClose={onClose} title={state?.title}>
      <Stack gap="md">
        <Text size="sm">{state?.text}</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button
            color="red"
            loading={busy}
            onClick={() => state && onConfirm(state)}
            data-testid="confirm-action"
          >
            {state?.confirm ?? 'Confirm'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

export const SEVERITY_COLORS = ['', 'red', 'orange', 'yellow', 'blue', 'gray'];

/** A confirmation dialog wired to a mutation: `ask(...)` opens it, Confirm runs the action. */
export function useConfirm(onDone: (answer: unknown) => void) {
  const [state, setState] = useState<ConfirmState | null>(null);
  const run = useMutation({
    mutationFn: (s: ConfirmState) => s.action(),
    onSuccess: (answer) => {
      setState(null);
      onDone(answer);
    },
    onError: toastError,
  });
  return {
    ask: setState,
    dialog: (
      <ConfirmDialog
        state={state}
        busy={run.isPending}
        onClose={() => setState(null)}
        onConfirm={(s) => run.mutate(s)}
      />
    ),
  };
}
