/**
 * The settings feature: services, network, hostname, host map, time and license on the real host
 * (spec part 3, "Appliance settings"; docs/features/settings.md). What others use:
 *
 * - `createSettings(ctx)`: builds the feature (composition root only); `attachRegistry` hands it
 *   the engine registry once app.ts has built it; `sniffInterfaces` is the captures feature's
 *   provider of the `use_sniffer` interfaces.
 */
import type { CoreContext } from '../../platform/context.js';
import type { EngineRegistry } from '../../platform/engines/engine-registry.js';
import { RootHelperClient } from '../../platform/host/root-helper.client.js';
import { ROOT_HELPER_DEFAULT_SOCKET } from '../../platform/host/root-helper.protocol.js';
import type { App } from '../../platform/http/http-server.js';
import { DEFAULT_HOST_PATHS, type HostPaths } from './host-system.service.js';
import { settingsRoutes } from './settings.routes.js';
import { SettingsService } from './settings.service.js';

export { SettingsService } from './settings.service.js';

export interface Settings {
  service: SettingsService;
  /** The interfaces marked use_sniffer (the captures feature's default interfaces). */
  sniffInterfaces: () => readonly string[];
  attachRegistry(registry: EngineRegistry): void;
  register(app: App): Promise<void>;
}

export interface SettingsTestOptions {
  paths?: Partial<HostPaths>;
  confirmWindowMs?: number;
}

export function createSettings(ctx: CoreContext, options: SettingsTestOptions = {}): Settings {
  let registry: EngineRegistry | null = null;
  const service = new SettingsService(ctx, {
    registry: () => registry,
    helper: new RootHelperClient({
      socketPath: ctx.config.rootHelperSocket ?? ROOT_HELPER_DEFAULT_SOCKET,
    }),
    mode: ctx.config.networkMode ?? 'dry-run',
    paths: { ...DEFAULT_HOST_PATHS, ...options.paths },
    ...(options.confirmWindowMs === undefined ? {} : { confirmWindowMs: options.confirmWindowMs }),
    hostname: ctx.hostname,
  });
  return {
    service,
    sniffInterfaces: () => service.sniffInterfaces(),
    attachRegistry(r) {
      registry = r;
    },
    register: (app) => settingsRoutes(app, ctx, { settings: service }),
  };
}
