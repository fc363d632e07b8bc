/**
 * Builds the captures feature for the composition root: the engines in order of preference
 * (APPLIANCE_CAPTURE_ENGINE: auto = dumpcap, then cap), the service, its start/stop engine, the
 * device deletion hook and the routes.
 */
import path from 'node:path';
import type { CoreContext } from '../../platform/context.js';
import type { DB } from '../../platform/db/database.js';
import { tableBytes, type RetentionRegistry } from '../../platform/db/retention.js';
import type { Engine } from '../../platform/engines/engine-registry.js';
import type { App } from '../../platform/http/http-server.js';
import type { Identity } from '../../platform/http/identity.js';
import type { CaptureEngine } from './capture-engine.rules.js';
import { CaptureInterfaces, type SniffInterfacesProvider } from './capture-interfaces.service.js';
import { CapEngine } from './cap.runtime.js';
import { detachDevice } from './captures.repository.js';
import { capturesRoutes } from './captures.routes.js';
import { CapturesService } from './captures.service.js';
import { DumpcapEngine } from './dumpcap.runtime.js';

export const CAPTURE_DEFAULTS = {
  maxActive: 4,
  diskMax: 2_147_483_648,
  idleSeconds: 60,
};

export interface CapturesDevices {
  visibleDevice(identity: Identity, deviceId: number): { ip_address: string } | null;
  registerDeviceCleanup(
    name: string,
    purge: (deviceId: number) => void,
    after?: (deviceId: number) => void,
  ): void;
}

export interface Captures {
  service: CapturesService;
  interfaces: CaptureInterfaces;
  engine: Engine;
  register(app: App): Promise<void>;
}

/** Default retention of ended captures and their files (days). */
export const CAPTURE_RETENTION_DAYS = 30;

/**
 * The captures' retention row: ended captures (row and pcapng file) that ended before the
 * cutoff; size is the files' bytes plus the rows' pages (dbstat). Files are removed on this
 * thread (the storage writer writes rows, not files), 100 captures at a time.
 */
export function registerCaptureRetention(
  retention: RetentionRegistry,
  db: DB,
  captures: CapturesService,
): void {
  retention.register({
    table: 'captures',
    defaultDays: CAPTURE_RETENTION_DAYS,
    size: () => captures.fileBytes() + tableBytes(db, ['captures', 'capture_chunks']),
    prune: (cutoff) => captures.pruneEndedBefore(cutoff),
  });
}

/** The captures daemon's variables as limits (a variable left unset keeps the configuration's). */
export function limitsOf(vars: Record<string, string>): {
  maxActive?: number;
  diskMax?: number;
  idleMs?: number;
} {
  const int = (text: string | undefined) =>
    text !== undefined && /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : undefined;
  const idle = int(vars.idle_seconds);
  return {
    maxActive: int(vars.max_active),
    diskMax: int(vars.disk_max_bytes),
    idleMs: idle === undefined ? undefined : idle * 1000,
  };
}

export function enginesFor(choice: 'auto' | 'dumpcap' | 'cap' | undefined): CaptureEngine[] {
  if (choice === 'dumpcap') return [new DumpcapEngine()];
  if (choice === 'cap') return [new CapEngine()];
  return [new DumpcapEngine(), new CapEngine()];
}

export function createCaptures(
  ctx: CoreContext,
  deps: {
    devices: CapturesDevices;
    sniffInterfaces?: SniffInterfacesProvider;
    engines?: readonly CaptureEngine[];
    /** The daemon's stored variables (features/maintenance daemon catalogue), read at each start. */
    daemonVars?: (daemon: string) => Record<string, string>;
  },
): Captures {
  const interfaces = new CaptureInterfaces(deps.sniffInterfaces);
  const service = new CapturesService({
    db: ctx.db,
    clock: ctx.clock,
    dir: path.join(ctx.config.dataDir, 'captures'),
    engines: deps.engines ?? enginesFor(ctx.config.captureEngine),
    maxActive: ctx.config.captureMax ?? CAPTURE_DEFAULTS.maxActive,
    diskMax: ctx.config.captureDiskMax ?? CAPTURE_DEFAULTS.diskMax,
    idleMs: (ctx.config.captureIdleSeconds ?? CAPTURE_DEFAULTS.idleSeconds) * 1000,
    log: ctx.log,
  });
  // Device deletion: the device's captures keep their rows and files (they are their owner's
  // evidence); the reference to the device is cleared and running ones are stopped.
  let stopAfterDelete: number[] = [];
  deps.devices.registerDeviceCleanup(
    'captures',
    (deviceId) => {
      stopAfterDelete = detachDevice(ctx.db, deviceId);
    },
    () => {
      service.stopLater(stopAfterDelete);
      stopAfterDelete = [];
    },
  );
  return {
    service,
    interfaces,
    engine: {
      name: 'captures',
      start: () => {
        service.applyLimits(limitsOf(deps.daemonVars?.('captures') ?? {}));
        return service.start();
      },
      stop: () => service.stop(),
    },
    register: (app) =>
      capturesRoutes(app, ctx, {
        captures: service,
        interfaces,
        visibleDevice: (identity, id) => deps.devices.visibleDevice(identity, id),
      }),
  };
}
