import { EmptyState } from '../../components/ui/feedback.js';

export function Page() {
  return <EmptyState title="Coming in this release">This page is being built.</EmptyState>;
}
