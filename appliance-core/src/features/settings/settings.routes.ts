import type { preValidationHookHandler } from 'fastify';
import { actorOf, recordAudit, type AuditEntry } from '../../platform/audit/audit-log.js';
import type { CoreContext } from '../../platform/context.js';
import { defineRoute } from '../../platform/http/define-route.js';
import { ApiFailure, failure, type RouteErrors } from '../../platform/http/envelopes.js';
import type { App } from '../../platform/http/http-server.js';
import { allOf } from '../../platform/http/identity.js';
import { LegacyStatusBody } from '../../platform/http/schemas.js';
import {
  CreateHostBody,
  DeleteHostBody,
  HostMapAnswer,
  HostMapPageAnswer,
  HostMapPageBody,
  HostnameAnswer,
  LicenseInfoAnswer,
  NetworkInfoAnswer,
  ProcmonBody,
  RestartAnswer,
  ServicesAnswer,
  SetHostnameAnswer,
  SetHostnameBody,
  SetNetworkAnswer,
  SetNetworkBody,
  SetTimeAnswer,
  SetTimeBody,
  StatusMessage201,
  TimeSettingsAnswer,
  UpdateHostBody,
  ValidateLicenseAnswer,
  ValidateLicenseBody,
} from './settings.schema.js';
import type { SettingsService } from './settings.service.js';

const TAGS = ['settings'];

/** A body-less request reads as `{}` (the console sends none for the first page). */
const absentBodyIsEmpty: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined || request.body === null) request.body = {};
  done();
};

export interface SettingsDeps {
  settings: SettingsService;
}

/** The settings family: HTTP 200 `{status: false, hasError: true, message}`. */
const legacy = (internal: string): RouteErrors => ({
  validation: 'legacy',
  failure: 'legacy',
  internal,
});
/** `{status: false, hasError: true, message}` with the real status (procmon, restartAppliance, license). */
const legacyStatus = (internal: string, validationStatus?: number): RouteErrors => ({
  validation: 'legacyStatus',
  failure: 'legacyStatus',
  internal,
  ...(validationStatus === undefined ? {} : { validationStatus }),
});

export async function settingsRoutes(
  app: App,
  ctx: CoreContext,
  deps: SettingsDeps,
): Promise<void> {
  const { settings } = deps;
  const { db, clock } = ctx;
  const access = allOf('system');
  type Request = Parameters<typeof actorOf>[0];
  const audit = (request: Request, entry: AuditEntry) =>
    recordAudit(db, clock.now(), actorOf(request), entry);
  /** Runs a host change and audits it, success or failure (never a secret in the detail). */
  const auditedChange = async <T>(
    request: Request,
    entry: Omit<AuditEntry, 'outcome'>,
    change: () => Promise<T>,
    detail: (result: T) => AuditEntry['detail'] = () => entry.detail,
  ): Promise<T> => {
    try {
      const result = await change();
      audit(request, { ...entry, outcome: 'success', detail: detail(result) });
      return result;
    } catch (err) {
      audit(request, {
        ...entry,
        outcome: 'failure',
        detail: {
          ...entry.detail,
          reason: err instanceof ApiFailure ? err.message : 'internal error',
        },
      });
      throw err;
    }
  };
  app.addHook('onClose', async () => settings.close());

  // spec: part3 > Appliance settings > GET /api/manageApplianceServices
  defineRoute(app, {
    method: 'GET',
    url: '/api/manageApplianceServices',
    access,
    errors: legacy('Failed to list services'),
    tags: TAGS,
    summary: "The appliance's services: its engines, and its systemd unit when it runs under one",
    response: { 200: ServicesAnswer },
    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      data: { services: await settings.services() },
    }),
  });

  // spec: part3 > Appliance settings > POST /api/procmon
  defineRoute(app, {
    method: 'POST',
    url: '/api/procmon',
    access,
    errors: legacyStatus('Failed to control the service', 400),
    tags: TAGS,
    summary: 'Start, stop, restart or reload one service (an engine or the systemd unit)',
    body: ProcmonBody,
    response: { 200: StatusMessage201, 400: LegacyStatusBody },
    handler: async (request) => {
      const { service, action } = request.body;
      const message = await auditedChange(
        request,
        {
          action: 'settings.service_action',
          target: { type: 'service', label: service.slice(0, 100) },
          detail: { verb: action, dry_run: settings.dryRun },
        },
        () => settings.procmon(service, action),
      );
      return { status: 201 as const, hasError: false as const, message };
    },
  });

  // spec: part3 > Appliance settings > POST /api/restartAppliance
  defineRoute(app, {
    method: 'POST',
    url: '/api/restartAppliance',
    access,
    errors: legacyStatus('Failed to restart the appliance services'),
    tags: TAGS,
    summary:
      'Restart every engine of this appliance (never the shared scheduler and storage writer)',
    response: { 200: RestartAnswer },
    handler: async (request) => {
      const { restarted } = await auditedChange(
        request,
        { action: 'settings.restart_appliance', target: { type: 'appliance' } },
        async () => {
          const result = await settings.restartAppliance();
          if (result.failed.length > 0)
            throw failure(500, `Services failed to restart: ${result.failed.join(', ')}`);
          return result;
        },
        (result) => ({ restarted: result.restarted }),
      );
      return {
        status: 200 as const,
        hasError: false as const,
        message: `${restarted.length} services restarted`,
        restarted,
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/getNetworkInfo
  defineRoute(app, {
    method: 'POST',
    url: '/api/getNetworkInfo',
    access,
    errors: legacy('Failed to read the network configuration'),
    tags: TAGS,
    summary:
      "The host's interfaces and their configuration; confirms a pending applied network change",
    response: { 200: NetworkInfoAnswer },
    handler: async (request) => {
      let confirmed = false;
      if (settings.pendingNetwork) {
        const pending = settings.pendingNetwork;
        confirmed = await settings.confirmPendingNetwork();
        audit(request, {
          action: 'settings.network_confirm',
          outcome: confirmed ? 'success' : 'failure',
          target: { type: 'network' },
          detail: { interfaces: pending.interfaces },
        });
      }
      return {
        status: 201 as const,
        hasError: false as const,
        network_mode: settings.mode,
        confirmed,
        interfaces: await settings.networkInfo(),
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/setNetworkInfo
  defineRoute(app, {
    method: 'POST',
    url: '/api/setNetworkInfo',
    access,
    errors: legacy('Failed to change the network configuration'),
    tags: TAGS,
    summary:
      'Configure interfaces (all or nothing); dry run reports what would be written, apply restarts host networking and rolls back unless confirmed',
    body: SetNetworkBody,
    response: { 200: SetNetworkAnswer },
    handler: async (request) => {
      const names = request.body.interfaces.map((i) => i.name);
      const result = await auditedChange(
        request,
        {
          action: 'settings.network_set',
          target: { type: 'network' },
          detail: { interfaces: names.map((n) => n.slice(0, 15)), dry_run: settings.dryRun },
        },
        () =>
          settings.setNetwork(request.body.interfaces, (interfaces) =>
            recordAudit(
              db,
              clock.now(),
              { userId: null, name: 'system', tokenId: null, sourceIp: null },
              {
                action: 'settings.network_rollback',
                outcome: 'success',
                target: { type: 'network' },
                detail: { interfaces },
              },
            ),
          ),
      );
      return {
        status: 201 as const,
        hasError: false as const,
        dry_run: result.dryRun,
        message: result.message,
        ...(result.dryRun ? {} : { confirm_within: settings.confirmWindowSeconds }),
      };
    },
  });

  // spec: part3 > Appliance settings > GET /api/getHostname
  defineRoute(app, {
    method: 'GET',
    url: '/api/getHostname',
    access,
    errors: legacy('Failed to read the hostname'),
    tags: TAGS,
    summary: "The host's name",
    response: { 200: HostnameAnswer },
    handler: async () => ({
      status: 200 as const,
      hasError: false as const,
      hostname: settings.hostname(),
    }),
  });

  // spec: part3 > Appliance settings > POST /api/setHostname
  defineRoute(app, {
    method: 'POST',
    url: '/api/setHostname',
    access,
    errors: {
      validation: 'messageErrors',
      failure: 'legacy',
      internal: 'Failed to set the hostname',
    },
    tags: TAGS,
    summary: "Set the host's name (a DNS name of at most 255 characters); dry run reports it",
    body: SetHostnameBody,
    response: { 200: SetHostnameAnswer },
    handler: async (request) => {
      const outcome = await settings.setHostname(request.body.hostname).catch((err: unknown) => {
        audit(request, {
          action: 'settings.hostname_set',
          outcome: 'failure',
          target: { type: 'hostname' },
          detail: {
            dry_run: settings.dryRun,
            reason: err instanceof ApiFailure ? err.message : 'internal error',
          },
        });
        throw err;
      });
      if ('errors' in outcome)
        throw new ApiFailure(422, outcome.errors[0] as string, {
          fields: { hostname: outcome.errors },
          family: 'messageErrors',
        });
      audit(request, {
        action: 'settings.hostname_set',
        outcome: 'success',
        target: { type: 'hostname', label: outcome.hostname },
        detail: { dry_run: outcome.dryRun },
      });
      return {
        status: 201 as const,
        message: outcome.message,
        hostname: outcome.hostname,
        dry_run: outcome.dryRun,
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/getHostnames
  defineRoute(app, {
    method: 'POST',
    url: '/api/getHostnames',
    access,
    errors: legacy('Failed to list the host map'),
    tags: TAGS,
    summary: 'The host map, a page at a time (page from 1, limit default 50, at most 1000)',
    body: HostMapPageBody,
    preValidation: absentBodyIsEmpty,
    response: { 200: HostMapPageAnswer },
    handler: async (request) => {
      const page = request.body?.page ?? 1;
      const limit = request.body?.limit ?? 50;
      const { rows, total, lastPage } = settings.hostMapPage(page, limit);
      return {
        status: 201 as const,
        hasError: false as const,
        data: rows as never,
        total,
        page,
        limit,
        last_page: lastPage,
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/createHostname
  defineRoute(app, {
    method: 'POST',
    url: '/api/createHostname',
    access,
    errors: legacy('Failed to create the host'),
    tags: TAGS,
    summary: 'Add a host map entry (ip and hostname unique together)',
    body: CreateHostBody,
    response: { 200: HostMapAnswer },
    handler: async (request) => {
      const row = settings.createHost(request.body);
      audit(request, {
        action: 'host_map.create',
        outcome: 'success',
        target: { type: 'host_map', id: row.id, label: row.hostname },
        detail: { ip: row.ip },
      });
      return {
        status: 201 as const,
        hasError: false as const,
        message: 'Host created',
        data: row as never,
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/updateHostname
  defineRoute(app, {
    method: 'POST',
    url: '/api/updateHostname',
    access,
    errors: legacy('Failed to update the host'),
    tags: TAGS,
    summary: 'Change a host map entry',
    body: UpdateHostBody,
    response: { 200: HostMapAnswer },
    handler: async (request) => {
      const { id, ...values } = request.body;
      const row = settings.updateHost(id, values);
      audit(request, {
        action: 'host_map.update',
        outcome: 'success',
        target: { type: 'host_map', id: row.id, label: row.hostname },
        detail: { ip: row.ip },
      });
      return {
        status: 201 as const,
        hasError: false as const,
        message: 'Host updated',
        data: row as never,
      };
    },
  });

  // spec: part3 > Appliance settings > POST /api/deleteHost
  defineRoute(app, {
    method: 'POST',
    url: '/api/deleteHost',
    access,
    errors: legacy('Failed to delete the host'),
    tags: TAGS,
    summary: 'Remove a host map entry',
    body: DeleteHostBody,
    response: { 200: StatusMessage201 },
    handler: async (request) => {
      const row = settings.deleteHost(request.body.id);
      audit(request, {
        action: 'host_map.delete',
        outcome: 'success',
        target: { type: 'host_map', id: row.id, label: row.hostname },
        detail: { ip: row.ip },
      });
      return { status: 201 as const, hasError: false as const, message: 'Host deleted' };
    },
  });

  // spec: part3 > Appliance settings > GET /api/getTimeSettings
  defineRoute(app, {
    method: 'GET',
    url: '/api/getTimeSettings',
    access,
    errors: legacy('Failed to read the time settings'),
    tags: TAGS,
    summary: "The host's time zone (zones from the system's zone database), sync mode and clock",
    response: { 200: TimeSettingsAnswer },
    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      data: settings.timeSettings(),
    }),
  });

  // spec: part3 > Appliance settings > POST /api/setTimeSettings
  defineRoute(app, {
    method: 'POST',
    url: '/api/setTimeSettings',
    access,
    errors: legacy('Failed to change the time settings'),
    tags: TAGS,
    summary: 'Set the time zone and NTP servers, or the clock by hand; dry run reports it',
    body: SetTimeBody,
    response: { 200: SetTimeAnswer },
    handler: async (request) => {
      const result = await auditedChange(
        request,
        {
          action: 'settings.time_set',
          target: { type: 'time' },
          detail: { dry_run: settings.dryRun },
        },
        () => settings.setTime(request.body),
        (r) => ({ dry_run: r.dryRun, type: r.type }),
      );
      return {
        status: 201 as const,
        hasError: false as const,
        message: result.message,
        dry_run: result.dryRun,
      };
    },
  });

  // spec: part3 > Appliance settings > GET /api/getLicenseInfo
  defineRoute(app, {
    method: 'GET',
    url: '/api/getLicenseInfo',
    access,
    errors: legacyStatus('Failed to read the license'),
    tags: TAGS,
    summary: 'License activations, newest first (an empty list when unlicensed)',
    response: { 200: LicenseInfoAnswer },
    handler: async () => ({
      status: 201 as const,
      hasError: false as const,
      data: settings.licenses(),
    }),
  });

  // spec: part3 > Appliance settings > POST /api/validateLicense
  defineRoute(app, {
    method: 'POST',
    url: '/api/validateLicense',
    access,
    errors: legacyStatus('Failed to activate the license'),
    tags: TAGS,
    summary: "Activate a registration key and restart this appliance's engines",
    body: ValidateLicenseBody,
    response: { 200: ValidateLicenseAnswer, 422: LegacyStatusBody },
    handler: async (request) => {
      const user = request.identity?.user;
      const result = await auditedChange(
        request,
        { action: 'license.activate', target: { type: 'license' } },
        async () => {
          const r = await settings.validateLicense(request.body.registrationKey, {
            name: user?.username ?? null,
            email: user?.email ?? null,
          });
          if (r.failed.length > 0)
            throw failure(
              500,
              `License activated; services failed to restart: ${r.failed.join(', ')}`,
            );
          return r;
        },
        (r) => ({ new_activation: r.created }),
      );
      return {
        status: 201 as const,
        hasError: false as const,
        message: { activation_key: result.key },
      };
    },
  });
}
