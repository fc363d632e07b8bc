/**
 * Is an outlet's URL (webhook, Slack, Teams, Discord) one the appliance may send to? Judged on
 * the URL as WHATWG parsing leaves it, never on the text typed: `http://2130706433/`,
 * `http://0177.0.0.1/` and `http://0x7f.1/` are all 127.0.0.1 by then, and `[::ffff:127.0.0.1]`
 * is judged as the IPv4 address it carries. Names are judged here without a lookup (metadata
 * names, `localhost`, punycode); the addresses a name resolves to are judged again inside the
 * lookup of the connection that sends (platform/net/outbound.ts `guardLookup`), so the address
 * connected to is always one that was checked.
 */
import { hostRefusal, type OutboundPolicy } from '../../../platform/net/outbound.js';

/** The outlet destination policy (platform/net/outbound.ts `outletPolicy`). */
export type OutletPolicy = OutboundPolicy;

export type OutletUrlCheck = { ok: true } | { ok: false; reason: string };

/** Longest URL accepted (Slack, Teams and Discord webhook URLs are well under 1 KiB). */
export const MAX_OUTLET_URL = 2048;

export function checkOutletUrl(url: string, policy: OutletPolicy): OutletUrlCheck {
  if (typeof url !== 'string' || url.length === 0)
    return { ok: false, reason: 'The URL is required' };
  if (url.length > MAX_OUTLET_URL)
    return { ok: false, reason: `The URL is longer than ${MAX_OUTLET_URL} characters` };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'The URL is not valid' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, reason: 'The URL scheme must be http or https' };
  if (parsed.username !== '' || parsed.password !== '')
    return {
      ok: false,
      reason: 'The URL must not carry credentials (use the authorization header)',
    };
  if (parsed.hostname === '') return { ok: false, reason: 'The URL has no host' };
  const refusal = hostRefusal(parsed.hostname, policy);
  return refusal === null ? { ok: true } : { ok: false, reason: `Refused: ${refusal}` };
}
