/**
 * The one seam that is not real until features/alerts/delivery is merged: a recording delivery
 * queue, a literal `{$variable}` renderer and an outbound check that refuses loopback, link-local
 * and unspecified hosts (parsed, so decimal and octal forms are caught) unless allowlisted.
 */
import type { DeliverySeam, Notification, OutletTarget } from '../alerts.service.js';

export interface Recorded {
  outlet: OutletTarget;
  notification: Notification;
  suppressedBy: string | undefined;
}

export function recordingDelivery(allow: readonly string[] = []) {
  const queued: Recorded[] = [];
  const tests: OutletTarget[] = [];
  const checked: string[] = [];
  const seam: DeliverySeam = {
    queue: {
      enqueue(outlet, notification, opts) {
        queued.push({ outlet, notification, suppressedBy: opts?.suppressedBy });
        return queued.length;
      },
      sendTest(outlet) {
        tests.push(outlet);
        return Promise.resolve({ ok: true });
      },
    },
    renderTemplate: (body, vars, opts) =>
      body.replace(/\{\$([a-z_]+)\}/g, (_, name: string) => {
        const value = vars[name] ?? '';
        return opts.html ? value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`) : value;
      }),
    checkOutletUrl(url) {
      checked.push(url);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return { ok: false, reason: 'not a URL' };
      }
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
        return { ok: false, reason: 'only http and https' };
      const host = parsed.hostname.replace(/^\[|\]$/g, '');
      if (allow.includes(host)) return { ok: true };
      if (/^(127\.|0\.0\.0\.0$|169\.254\.)|^::1$|^::ffff:(127\.|7f)/i.test(host))
        return { ok: false, reason: `${host} is a loopback or link-local address` };
      return { ok: true };
    },
  };
  return { seam, queued, tests, checked };
}
