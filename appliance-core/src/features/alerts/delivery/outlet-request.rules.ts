/**
 * From an outlet and a notification to what is sent: the HTTP request of a webhook, Slack,
 * Teams, Discord or (old rows) Office 365 outlet, or the recipients of an email outlet. Pure.
 */
import type { Notification, OutletTarget } from './delivery.schema.js';
import { isEmailAddress } from './mail.service.js';
import type { OutletRequest } from './outlet-http.service.js';
import {
  discordPayload,
  SEVERITY_COLOURS,
  slackPayload,
  teamsPayload,
  validAuthorization,
  validateHeaders,
  webhookPayload,
} from './outlet-payload.rules.js';

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** The recipients of an email outlet: `email` (one address or a comma list) and `emails`. */
export function recipientsOf(config: Record<string, unknown>): string[] {
  const list: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string') list.push(...value.split(/[,;\s]+/));
    else if (Array.isArray(value)) for (const v of value) add(v);
  };
  add(config.email);
  add(config.emails);
  return [...new Set(list.map((x) => x.trim()).filter((x) => x !== '' && isEmailAddress(x)))];
}

/** The legacy Office 365 connector card (MessageCard), for `o365` rows created before. */
function messageCard(n: Notification): Record<string, unknown> {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: n.subject,
    themeColor: (SEVERITY_COLOURS[n.severity] ?? 0xfbc02d).toString(16).padStart(6, '0'),
    title: n.subject,
    text: n.text,
  };
}

export function buildOutletRequest(
  target: OutletTarget,
  n: Notification,
  now: number,
): { ok: true; request: OutletRequest } | { ok: false; error: string } {
  const config = target.config;
  const url = typeof config.url === 'string' ? config.url : '';
  if (!url) return { ok: false, error: 'The outlet has no URL' };
  const { headers, problems } = validateHeaders(config.headers);
  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  let body: Record<string, unknown>;
  let method: OutletRequest['method'] = 'POST';
  switch (target.type) {
    case 'slack':
      body = slackPayload(n);
      break;
    case 'teams':
      body = teamsPayload(n);
      break;
    case 'discord':
      body = discordPayload(n, now);
      break;
    case 'o365':
      body = messageCard(n);
      break;
    case 'webhook': {
      body = webhookPayload(n, now);
      const wanted = typeof config.method === 'string' ? config.method.toUpperCase() : 'POST';
      if (!(WEBHOOK_METHODS as readonly string[]).includes(wanted))
        return {
          ok: false,
          error: `The webhook method must be one of ${WEBHOOK_METHODS.join(', ')}`,
        };
      method = wanted as OutletRequest['method'];
      if (
        config.authorization_header !== undefined &&
        config.authorization_header !== null &&
        config.authorization_header !== ''
      ) {
        const authorization = validAuthorization(config.authorization_header);
        if (authorization === null)
          return {
            ok: false,
            error: 'The authorization header must be text without CR, LF or NUL',
          };
        headers.authorization = authorization;
      }
      break;
    }
    default:
      return { ok: false, error: `Outlets of type ${String(target.type)} send no HTTP request` };
  }
  return { ok: true, request: { url, method, headers, body: JSON.stringify(body) } };
}
