/**
 * The console keeps its own copy of the daemon catalogue (renderer/src/features/settings/
 * daemon-catalog.ts `DAEMON_VARS`: the renderer may not import appliance-core, and no route lists
 * the catalogue): this test holds the copy to the appliance's `DAEMON_CATALOG`, variable by
 * variable and secret flag by secret flag, so that a variable added on one side only fails here.
 */
import { describe, expect, it } from 'vitest';
import { DAEMON_CATALOG } from '../../appliance-core/src/features/maintenance/daemons.catalog.js';
import { DAEMON_VARS } from '../../renderer/src/features/settings/daemon-catalog.js';

describe('daemon catalogue: console copy', () => {
  it('names the same daemons, variables and secrets as the appliance', () => {
    const shape = (
      catalogue: Readonly<Record<string, readonly { var: string; secret?: boolean }[]>>,
    ) =>
      Object.fromEntries(
        Object.entries(catalogue).map(([daemon, vars]) => [
          daemon,
          vars.map((v) => `${v.var}${v.secret ? ' (secret)' : ''}`).sort(),
        ]),
      );
    expect(shape(DAEMON_VARS)).toEqual(shape(DAEMON_CATALOG));
  });
});
