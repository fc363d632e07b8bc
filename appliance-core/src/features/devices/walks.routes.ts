/**
 * SNMP walks (spec part 2 > Network tools > getSNMPWalkInfo, getLastWalk). The target is a device
 * id the caller can see; the walk uses the device's stored credentials and is kept in walks_log.
 */
import { Type } from '@sinclair/typebox';
import type { CoreContext } from '../../platform/context.js';
import { failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf, type Identity } from '../../platform/http/identity.js';
import { identityOf } from '../../platform/http/route-config.js';
import { defineRoute, ERROR_PRESETS } from '../../platform/http/define-route.js';
import { StatusMessageBody } from '../../platform/http/schemas.js';
import { snmpTargetOfDevice } from './device-snmp.service.js';
import type { DeviceRow } from './devices.repository.js';
import {
  DeviceTextParams,
  LastWalkResult,
  LiveWalkResult,
  WalkTargetParams,
} from './devices.schema.js';
import type { DevicesService } from './devices.service.js';
import { SnmpError, withSnmpSession, type WalkOptions } from '../../platform/snmp/snmp.client.js';
import type { ToolRunSlots } from '../tools/index.js';

const INVALID_DEVICE = 'Invalid device specified';
/** A live walk covers the agent's whole view, within these bounds. */
export const LIVE_WALK_BOUNDS: Omit<WalkOptions, 'signal'> = {
  maxVarbinds: 50_000,
  deadlineMs: 120_000,
  maxRepetitions: 40,
};
const LIVE_WALK_TIMING = { timeoutMs: 5000, retries: 1 };
/** Live walks running at once, appliance-wide (each holds up to 50k varbinds in memory). */
export const LIVE_WALK_CONCURRENCY = 2;

export interface WalksRoutesDeps {
  devices: DevicesService;
  /** The appliance's tool-run slots: a live walk is a tool run (429 past the limits). */
  toolRuns: Pick<ToolRunSlots, 'hook'>;
}

export async function walksRoutes(
  app: App,
  ctx: CoreContext,
  deps: WalksRoutesDeps,
): Promise<void> {
  const { db, clock, secrets } = ctx;
  const { devices } = deps;
  let running = 0;

  const deviceOf = (identity: Identity, target: string): DeviceRow => {
    const id = /^[1-9]\d{0,15}$/.test(target) ? Number(target) : null;
    const device = id === null ? null : devices.visibleDevice(identity, id);
    if (!device) throw failure(200, INVALID_DEVICE);
    return device;
  };

  // spec: part2 > Network tools > POST /api/getSNMPWalkInfo/{target}
  const walkErrors: RouteErrors = {
    ...ERROR_PRESETS.tool,
    internal: 'The SNMP walk failed unexpectedly.',
  };
  defineRoute(app, {
    method: 'POST',
    url: '/api/getSNMPWalkInfo/:target',
    access: allOf('tools'),
    errors: walkErrors,
    tags: ['tools'],
    summary: "Walk a device's SNMP tree now with its stored credentials (long-running)",
    params: WalkTargetParams,
    admission: deps.toolRuns.hook,
    response: {
      200: Type.Union([LiveWalkResult, StatusMessageBody]),
      500: StatusMessageBody,
    },

    handler: async (request, reply) => {
      const device = deviceOf(identityOf(request), request.params.target);
      const target = snmpTargetOfDevice(db, secrets, device.id);
      if (!target) throw failure(200, 'SNMP is not enabled for this device');
      if (running >= LIVE_WALK_CONCURRENCY)
        throw failure(200, 'Another SNMP walk is running; try again when it has finished');
      running++;
      // A client that goes away ends its walk (the response closes before it was written).
      const controller = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) controller.abort();
      };
      reply.raw.once('close', onClose);
      const timestamp = clock.now();
      try {
        const result = await withSnmpSession(target, LIVE_WALK_TIMING, (session) =>
          session.walk('1.3.6.1', { ...LIVE_WALK_BOUNDS, signal: controller.signal }),
        );
        if (result.varbinds.length === 0) throw failure(200, 'SNMP walk returned nothing');
        const walk = devices.walks.insert({
          deviceId: device.id,
          timestamp,
          kind: 'live',
          varbinds: result.varbinds,
          durationMs: result.durationMs,
          truncated: result.truncated,
        });
        return { status: 201 as const, message: walk };
      } catch (err) {
        if (err instanceof SnmpError) throw failure(200, `SNMP walk failed: ${err.message}`);
        throw err;
      } finally {
        running--;
        reply.raw.off('close', onClose);
      }
    },
  });

  // spec: part2 > Network tools > GET /api/getLastWalk/{device}
  defineRoute(app, {
    method: 'GET',
    url: '/api/getLastWalk/:device',
    access: allOf('tools'),
    errors: walkErrors,
    tags: ['tools'],
    summary: "The device's newest stored walk (crawl or live), or null",
    params: DeviceTextParams,
    response: {
      200: Type.Union([LastWalkResult, StatusMessageBody]),
      500: StatusMessageBody,
    },

    handler: async (request) => {
      const device = deviceOf(identityOf(request), request.params.device);
      return { status: 201 as const, walk: devices.walks.latest(device.id) };
    },
  });
}
