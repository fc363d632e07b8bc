import { actorOf, recordAudit } from '../../../platform/audit/audit-log.js';
import type { CoreContext } from '../../../platform/context.js';
import { defineRoute } from '../../../platform/http/define-route.js';
import { ApiFailure } from '../../../platform/http/envelopes.js';
import type { App } from '../../../platform/http/http-server.js';
import { allOf } from '../../../platform/http/identity.js';
import { SmtpSettingsAnswer, SmtpSettingsBody } from './smtp-settings.schema.js';
import type { SmtpSettingsService } from './smtp-settings.service.js';

export interface SmtpSettingsDeps {
  smtp: SmtpSettingsService;
}

export async function smtpSettingsRoutes(
  app: App,
  ctx: CoreContext,
  deps: SmtpSettingsDeps,
): Promise<void> {
  const { smtp } = deps;
  // spec: part3 > Appliance settings > POST /api/smtpSettings
  defineRoute(app, {
    method: 'POST',
    url: '/api/smtpSettings',
    access: allOf('system'),
    errors: {
      validation: 'legacy',
      failure: 'legacy',
      internal: 'Failed to process the mail relay settings',
    },
    tags: ['settings'],
    summary: 'Read, save or test the mail relay (action get, set or test)',
    description:
      '`get` returns the settings with `authpass` masked; `set` saves them (`authpass` as the sentinel, empty or absent keeps the stored password); `test` sends a real mail (to `to`, else to `email`) with the settings sent, or the stored ones when none are sent. Failures answer HTTP 200 with `hasError: true`.',
    body: SmtpSettingsBody,
    response: { 200: SmtpSettingsAnswer },
    handler: async (request) => {
      const body = request.body;
      const ok = { status: 201 as const, hasError: false as const };
      if (body.action === 'get') return { ...ok, smtp: smtp.view() };
      const actor = actorOf(request);
      if (body.action === 'set') {
        const row = smtp.set(body);
        recordAudit(ctx.db, ctx.clock.now(), actor, {
          action: 'smtp.update',
          outcome: 'success',
          target: { type: 'smtp', label: `${row.server}:${row.port}` },
          detail: {
            auth: row.auth === 1,
            usessl: row.usessl === 1,
            login_changed: typeof body.authpass === 'string' && body.authpass !== '',
          },
        });
        return { ...ok, smtp: 'SMTP settings saved' };
      }
      try {
        const sent = await smtp.test(body);
        recordAudit(ctx.db, ctx.clock.now(), actor, {
          action: 'smtp.test',
          outcome: 'success',
          target: { type: 'smtp', label: sent.server },
        });
        return { ...ok, smtp: `Test email sent to ${sent.to} through ${sent.server}` };
      } catch (err) {
        if (err instanceof ApiFailure)
          recordAudit(ctx.db, ctx.clock.now(), actor, {
            action: 'smtp.test',
            outcome: 'failure',
            target: { type: 'smtp' },
            detail: { reason: err.message },
          });
        throw err;
      }
    },
  });
}
