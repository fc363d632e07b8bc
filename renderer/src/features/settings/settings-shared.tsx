/** Pieces every settings page shares: the permission gate and the outcome of the last change. */
import { Alert, Badge, useComputedColorScheme, type BadgeProps } from '@mantine/core';
import type { ReactNode } from 'react';

import { EmptyState, RowsSkeleton } from '../../components/ui/feedback.js';
import { PageHeader } from '../../components/ui/page-header.js';
import { useCaller, type Permission } from '../../lib/caller.js';
import './settings.css';

/** The class of every settings page and dialog (settings.css: readable field errors). */
export const SCOPE = 'settings-page';

/** Renders the page only for a caller holding `permission` (`system`, or `sa` for daemons). */
export function Gated({
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
  return <div className={SCOPE}>{children}</div>;
}

export interface Outcome {
  ok: boolean;
  /** A success that changed nothing on the host (dry run) or only partly worked. */
  warn?: boolean;
  title: string;
  message: string;
}

/** The answer of the last change, kept on the page (a notification would vanish). */
export function OutcomeNotice({
  outcome,
  onClose,
}: {
  outcome: Outcome | null;
  onClose?: () => void;
}) {
  if (!outcome) return null;
  return (
    <Alert
      color={!outcome.ok ? 'red' : outcome.warn ? 'yellow' : 'teal'}
      variant="light"
      title={outcome.title}
      role={outcome.ok ? 'status' : 'alert'}
      data-testid="outcome"
      withCloseButton={onClose !== undefined}
      onClose={onClose}
      style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}
    >
      {outcome.message}
    </Alert>
  );
}

/**
 * A state badge readable in both themes: light tints fail 4.5:1 on a white page, so the light
 * theme draws outlines (as components/ui/status.tsx does).
 */
export function StateBadge(props: Omit<BadgeProps, 'variant'> & { 'data-testid'?: string }) {
  const light = useComputedColorScheme('dark') === 'light';
  return <Badge {...props} variant={light ? 'outline' : 'light'} />;
}
