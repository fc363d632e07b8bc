/**
 * Notification templates: logic-less `{$variable}` substitution and nothing else.
 *
 * Invariants:
 * - The only syntax is `{$name}` (letters, digits, `_`, `.` and `-`). Everything else in a
 *   template is text: `{{constructor.constructor('return process')()}}`, `{% include '/etc/passwd' %}`,
 *   `${process.env}` and `<%= 7*7 %>` render as written. Nothing is evaluated, no file is read.
 * - One pass over the template: a value that contains `{$other}` (a syslog line can) is inserted
 *   as text and never substituted again.
 * - With `html`, every value is HTML-escaped (`& < > " '`); the template itself is trusted
 *   (operators write it). An unknown variable renders as empty text.
 */

const VARIABLE = /\{\$([A-Za-z0-9_.-]{1,64})\}/g;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

export function renderTemplate(
  body: string,
  vars: Record<string, string>,
  opts: { html: boolean },
): string {
  return body.replace(VARIABLE, (_match, name: string) => {
    const value = Object.prototype.hasOwnProperty.call(vars, name) ? String(vars[name]) : '';
    return opts.html ? escapeHtml(value) : value;
  });
}
