/**
 * The `services` op on Linux: systemd's service units through `systemctl` (an argument array,
 * no shell). Where no systemd runs (containers, CI) the op fails with
 * `services unavailable: no systemd`.
 */
import { existsSync } from 'node:fs';

import { OpError } from './paths.js';
import { runProgram } from './run.js';

export interface ServiceRow {
  Name: string;
  State: 'Running' | 'Stopped' | 'Starting' | 'Stopping' | 'Failed' | 'Unknown';
  DisplayName: string;
}

export const NO_SYSTEMD = 'services unavailable: no systemd';

/**
 * systemd's own test for "booted with systemd" (sd_booted). NETMON_AGENT_SYSTEMD_DIR names another
 * folder to test: the end-to-end tests point it (with a stand-in `systemctl` on PATH) at a folder of
 * their own, since no systemd runs where they do.
 */
export function systemdRuns(
  root = process.env.NETMON_AGENT_SYSTEMD_DIR ?? '/run/systemd/system',
): boolean {
  return existsSync(root);
}

export function stateOf(active: string): ServiceRow['State'] {
  if (active === 'active') return 'Running';
  if (active === 'inactive') return 'Stopped';
  if (active === 'activating' || active === 'reloading') return 'Starting';
  if (active === 'deactivating') return 'Stopping';
  if (active === 'failed') return 'Failed';
  return 'Unknown';
}

/** Parses `systemctl list-units --type=service --all --plain --no-legend --no-pager`. */
export function parseListUnits(text: string): ServiceRow[] {
  const rows: ServiceRow[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*(?:●\s*)?(\S+\.service)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, unit = '', , active = '', , description = ''] = match;
    rows.push({
      Name: unit.replace(/\.service$/, ''),
      State: stateOf(active),
      DisplayName: description.trim() || unit,
    });
  }
  return rows;
}

export async function listServices(): Promise<ServiceRow[]> {
  if (!systemdRuns()) throw new OpError(NO_SYSTEMD);
  const result = await runProgram('systemctl', [
    'list-units',
    '--type=service',
    '--all',
    '--plain',
    '--no-legend',
    '--no-pager',
  ]);
  if (result.code !== 0) throw new OpError(NO_SYSTEMD);
  return parseListUnits(result.stdout);
}
