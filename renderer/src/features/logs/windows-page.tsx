/** The windows explorer (spec part 3): the shared log explorer with this feed's columns and filters. */
import { LogExplorer } from './log-explorer.js';

export function Page() {
  return <LogExplorer key="eventlog" feedId="eventlog" />;
}
