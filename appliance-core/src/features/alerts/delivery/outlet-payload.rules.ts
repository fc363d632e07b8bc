/**
 * What each outlet type sends, built from a notification and the outlet's config; pure, no I/O.
 *
 * Formats (documented by each service):
 * - Slack incoming webhooks: JSON `{text, blocks}`; `text` is the notification fallback and the
 *   Block Kit `header` (plain_text, at most 150 characters) and `section` (mrkdwn, at most 3000)
 *   carry the message. mrkdwn text escapes `&`, `<` and `>` ("Formatting text for app surfaces",
 *   https://api.slack.com/reference/surfaces/formatting#escaping, and
 *   https://api.slack.com/messaging/webhooks).
 * - Microsoft Teams through a Workflows "When a Teams webhook request is received" trigger
 *   (Microsoft 365 connectors are retired; Workflows accept Adaptive Cards only): JSON
 *   `{type: 'message', attachments: [{contentType: 'application/vnd.microsoft.card.adaptive',
 *   contentUrl: null, content: <AdaptiveCard 1.4>}]}`
 *   (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using).
 * - Discord "Execute Webhook": JSON `{content?, embeds: [{title (<= 256), description
 *   (<= 4096), color, timestamp}], allowed_mentions: {parse: []}}` (content <= 2000; the empty
 *   `parse` list keeps `@everyone` in a syslog line from pinging anyone)
 *   (https://discord.com/developers/docs/resources/webhook#execute-webhook).
 * - A generic webhook: the notification as JSON (below), with the outlet's method, custom
 *   headers and `authorization_header`.
 *
 * Custom headers: names are RFC 9110 tokens, values carry no CR, LF or NUL (no header
 * injection), and the transport's own headers (Host, Content-Length, Transfer-Encoding,
 * Connection) cannot be overridden.
 */
import type { Notification } from './delivery.schema.js';

export const SEVERITY_COLOURS: Record<number, number> = {
  1: 0xd32f2f, // critical
  2: 0xf57c00,
  3: 0xfbc02d,
  4: 0x1976d2,
  5: 0x607d8b, // informational
};

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
]);
export const MAX_CUSTOM_HEADERS = 20;
export const MAX_HEADER_VALUE = 4096;

/**
 * The custom headers of an outlet, validated: the list of problems (empty when fine) and the
 * headers as they will be sent. Accepts an object `{name: value}` or an array of `{name, value}`
 * (or `{key, value}`).
 */
export function validateHeaders(input: unknown): {
  headers: Record<string, string>;
  problems: string[];
} {
  const headers: Record<string, string> = {};
  const problems: string[] = [];
  if (input === undefined || input === null || input === '') return { headers, problems };
  let pairs: [string, unknown][];
  if (Array.isArray(input))
    pairs = input.map((entry) => {
      const e = (entry ?? {}) as Record<string, unknown>;
      const name = e.name ?? e.key;
      return [typeof name === 'string' ? name : '', e.value];
    });
  else if (typeof input === 'object') pairs = Object.entries(input as Record<string, unknown>);
  else return { headers, problems: ['The headers must be an object of names and values'] };
  if (pairs.length > MAX_CUSTOM_HEADERS)
    problems.push(`At most ${MAX_CUSTOM_HEADERS} custom headers are allowed`);
  for (const [name, value] of pairs.slice(0, MAX_CUSTOM_HEADERS)) {
    if (!HEADER_NAME.test(name)) {
      problems.push(
        `The header name "${name.replace(/[^\x20-\x7e]/g, '?').slice(0, 64)}" is not valid`,
      );
      continue;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      problems.push(`The header ${name} is set by the appliance and cannot be overridden`);
      continue;
    }
    if (name.toLowerCase() === 'authorization') {
      problems.push(
        'Use authorization_header for the Authorization header (it is stored encrypted)',
      );
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      problems.push(`The header ${name} needs a text value`);
      continue;
    }
    const text = String(value);
    if (/[\r\n\0]/.test(text)) {
      problems.push(`The header ${name} must not contain CR, LF or NUL`);
      continue;
    }
    if (text.length > MAX_HEADER_VALUE) {
      problems.push(`The header ${name} is longer than ${MAX_HEADER_VALUE} characters`);
      continue;
    }
    headers[name] = text;
  }
  return { headers, problems };
}

/** The Authorization header value: no CR, LF or NUL. Null when it is not one. */
export function validAuthorization(value: unknown): string | null {
  if (typeof value !== 'string' || value === '' || value.length > MAX_HEADER_VALUE) return null;
  return /[\r\n\0]/.test(value) ? null : value;
}

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1)}…`;

const slackEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackPayload(n: Notification): Record<string, unknown> {
  return {
    text: clip(slackEscape(n.subject), 3000),
    blocks: [
      {
        type: 'header',
        text: { type: 'plain_text', text: clip(n.subject || ' ', 150), emoji: false },
      },
      { type: 'section', text: { type: 'mrkdwn', text: clip(slackEscape(n.text || ' '), 3000) } },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: slackEscape(`${n.alertLabel} · severity ${n.severity}`) },
        ],
      },
    ],
  };
}

export function teamsPayload(n: Notification): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: n.subject, weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'TextBlock', text: n.text, wrap: true },
            {
              type: 'FactSet',
              facts: [
                { title: 'Alert', value: n.alertLabel },
                { title: 'Severity', value: String(n.severity) },
              ],
            },
          ],
        },
      },
    ],
  };
}

export function discordPayload(n: Notification, now: number): Record<string, unknown> {
  return {
    embeds: [
      {
        title: clip(n.subject || n.alertLabel, 256),
        description: clip(n.text, 4096),
        color: SEVERITY_COLOURS[n.severity] ?? SEVERITY_COLOURS[3],
        timestamp: new Date(now).toISOString(),
        footer: { text: clip(`${n.alertLabel} · severity ${n.severity}`, 2048) },
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/** The body of a generic webhook (documented in docs/features/alert-delivery.md). */
export function webhookPayload(n: Notification, now: number): Record<string, unknown> {
  return {
    occurrence_id: n.occurrenceId,
    alert: n.alertLabel,
    severity: n.severity,
    subject: n.subject,
    text: n.text,
    html: n.html,
    variables: n.variables,
    sent_at: new Date(now).toISOString(),
  };
}
