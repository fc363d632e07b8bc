/**
 * The OS upgrade bootstrap (spec part 1): GET /api/osUpgrade/info, POST install, start and stop,
 * driving the host package's upgrader through its root helper.
 */
import { createRequire } from 'node:module';
import type { CoreContext } from '../../platform/context.js';
import type { App } from '../../platform/http/http-server.js';
import { upgraderRoutes } from './upgrader.routes.js';
import { socketUpgraderHost, type UpgraderHost } from './upgrader.runtime.js';
import { UpgraderService } from './upgrader.service.js';

export { HelperUnreachable, socketUpgraderHost, type UpgraderHost } from './upgrader.runtime.js';
export { UpgraderService } from './upgrader.service.js';

/** The appliance's version: the package's (package.json, also the .deb's version). */
export const APPLIANCE_PACKAGE_VERSION = (
  createRequire(import.meta.url)('../../../../package.json') as { version: string }
).version;

export function createUpgrader(
  ctx: CoreContext,
  options: { socketPath: string; host?: UpgraderHost; version?: string },
) {
  const upgrader = new UpgraderService({
    host: options.host ?? socketUpgraderHost(options.socketPath),
    version: options.version ?? APPLIANCE_PACKAGE_VERSION,
  });
  return {
    upgrader,
    register: (app: App) => upgraderRoutes(app, ctx, { upgrader }),
  };
}
