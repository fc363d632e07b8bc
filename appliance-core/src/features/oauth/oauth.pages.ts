/**
 * Server-rendered HTML of the /auth pages: sign-in (password, then TOTP), device approval and
 * consent. Plain HTML, no framework, no inline script or style (the pages' CSP forbids both).
 *
 * Invariant: every interpolated value goes through the `escaped` template tag, which escapes it
 * unless it is a Markup fragment built by `escaped` itself. Text from users and clients (client
 * names, redirect URIs, state, typed codes) is data, never markup. (The tag is deliberately not
 * named `html`: Prettier would reformat templates with that tag as HTML documents.)
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => ESCAPES[ch] as string);
}

export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = string | number | Markup | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Markup) return value.text;
  if (Array.isArray(value)) return value.map((v: Value) => render(v)).join('');
  return escapeHtml(String(value));
}

/** Template tag: literal parts are markup, interpolations are escaped. */
export function escaped(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0] as string;
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] as string);
  });
  return new Markup(out);
}

const SCOPE_TEXT: Record<string, string> = {
  'mcp:devices': 'Devices, dashboards and device data',
  'mcp:alerts': 'Alerts, templates and notification outlets',
  'mcp:logs': 'Syslog, Windows event logs and IDS events',
  'mcp:reports': 'Reports',
  'mcp:system': 'Appliance settings, users and agent administration',
  'mcp:tools': 'On-box network tools and URL monitoring',
  'mcp:vne': 'Flow explorer (NetFlow and IPFIX records)',
  'mcp:capture': 'Packet captures',
};

function layout(title: string, body: Markup, options: { script?: string } = {}): string {
  const page = escaped`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · Network monitoring appliance</title>
<link rel="stylesheet" href="/auth/assets/auth.css">
</head>
<body>
<main>
<div class="brand">Network monitoring appliance</div>
${body}
</main>
${options.script ? escaped`<script src="${options.script}" defer></script>` : ''}
</body>
</html>
`;
  return page.text;
}

function scopeList(scopes: readonly string[]): Markup {
  return escaped`<ul class="scopes">${scopes.map((s) => escaped`<li><code>${s}</code> — ${SCOPE_TEXT[s] ?? s}</li>`)}</ul>`;
}

function signedInAs(username: string, returnTo: string): Markup {
  return escaped`<footer>Signed in as <strong>${username}</strong>. <a href="/auth/signin?redirect=${encodeURIComponent(returnTo)}">Not you? Sign in as someone else</a>.</footer>`;
}

// --- sign-in --------------------------------------------------------------------------------

export function signInPage(args: {
  csrf: string;
  redirect: string;
  error?: string;
  username?: string;
}): string {
  return layout(
    'Sign in',
    escaped`<h1>Sign in</h1>
<p class="muted">Sign in with your appliance account to continue.</p>
${args.error ? escaped`<p class="error" role="alert">${args.error}</p>` : ''}
<form method="post" action="/auth/signin">
<input type="hidden" name="csrf" value="${args.csrf}">
<input type="hidden" name="redirect" value="${args.redirect}">
<label for="username">Username or email</label>
<input type="text" id="username" name="username" value="${args.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`,
  );
}

export function totpPage(args: {
  csrf: string;
  redirect: string;
  ticket: string;
  error?: string;
}): string {
  return layout(
    'Two-factor code',
    escaped`<h1>Two-factor code</h1>
<p class="muted">Enter the 6-digit code from your authenticator app.</p>
${args.error ? escaped`<p class="error" role="alert">${args.error}</p>` : ''}
<form method="post" action="/auth/signin">
<input type="hidden" name="csrf" value="${args.csrf}">
<input type="hidden" name="redirect" value="${args.redirect}">
<input type="hidden" name="ticket" value="${args.ticket}">
<label for="totp">Code</label>
<input type="text" id="totp" name="totp" class="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="8" required autofocus>
<div class="actions"><button type="submit">Verify</button></div>
</form>
<p class="muted"><a href="/auth/signin?redirect=${encodeURIComponent(args.redirect)}">Start again</a></p>`,
  );
}

// --- device approval -----------------------------------------------------------------------

/** The message for a wrong, expired or used code and for a user without `api`: always the same. */
export const DEVICE_CODE_ERROR =
  'That code is not valid. Check the code shown on your device and try again.';

export function devicePage(args: {
  csrf: string;
  username: string;
  userCode?: string | undefined;
  error?: string;
}): string {
  return layout(
    'Connect a device',
    escaped`<h1>Connect a device</h1>
<p>Enter the code shown by the application or script that asks for access to this appliance.</p>
${args.error ? escaped`<p class="error" role="alert">${args.error}</p>` : ''}
<form method="post" action="/auth/device">
<input type="hidden" name="csrf" value="${args.csrf}">
<label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" class="code" value="${args.userCode ?? ''}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="16" placeholder="BCDFGHJK" required autofocus>
<p class="muted">Only approve a code that you started yourself. The application will act as you, with your permissions, for the scopes it asked for.</p>
<div class="actions">
<button type="submit" name="approve" value="1">Approve</button>
<button type="submit" name="deny" value="1" class="secondary">Deny</button>
</div>
</form>
${signedInAs(args.username, '/auth/device')}`,
    { script: '/auth/device-code.js' },
  );
}

export function deviceDecidedPage(args: {
  approved: boolean;
  clientName: string;
  scopes: readonly string[];
  username: string;
}): string {
  return layout(
    args.approved ? 'Device connected' : 'Request denied',
    args.approved
      ? escaped`<h1>Device connected</h1>
<p class="success">You approved <strong>${args.clientName}</strong>.</p>
<p>It receives a token that acts as you, for one hour at a time, with these scopes:</p>
${scopeList(args.scopes)}
<p class="muted">You can close this window and return to the application. Revoke its token at any time from your token list.</p>
${signedInAs(args.username, '/auth/device')}`
      : escaped`<h1>Request denied</h1>
<p>You denied <strong>${args.clientName}</strong>. It receives no token.</p>
<p class="muted">You can close this window.</p>
${signedInAs(args.username, '/auth/device')}`,
  );
}

// --- consent --------------------------------------------------------------------------------

export interface ConsentView {
  csrf: string;
  username: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: readonly string[];
  state: string | null;
  returnTo: string;
}

export function consentPage(view: ConsentView): string {
  const host = new URL(view.redirectUri).host;
  return layout(
    'Authorize application',
    escaped`<h1>Authorize ${view.clientName}</h1>
<p><strong>${view.clientName}</strong> <span class="badge">Unverified</span> asks to access this appliance as <strong>${view.username}</strong>.</p>
<p class="notice">This client registered itself (dynamic registration); the appliance cannot verify who runs it. An operator approved it, but approve only if you started this request yourself.</p>
<dl>
<dt>Requested scopes</dt>
<dd>${scopeList(view.scopes)}</dd>
<dt>You will be sent back to</dt>
<dd><code>${host}</code></dd>
<dt>Client ID</dt>
<dd><code>${view.clientId}</code></dd>
</dl>
<p class="muted">The application receives a token that acts as you and never exceeds your own permissions. It lasts one hour; the application may renew it until you revoke it (a renewal lapses after 30 days without use).</p>
<form method="post" action="/auth/authorize">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="client_id" value="${view.clientId}">
<input type="hidden" name="redirect_uri" value="${view.redirectUri}">
<input type="hidden" name="code_challenge" value="${view.codeChallenge}">
<input type="hidden" name="code_challenge_method" value="S256">
<input type="hidden" name="scope" value="${view.scopes.join(' ')}">
${view.state !== null ? escaped`<input type="hidden" name="state" value="${view.state}">` : ''}
<div class="actions">
<button type="submit" name="approve" value="1">Approve</button>
<button type="submit" name="deny" value="1" class="secondary">Deny</button>
</div>
</form>
${signedInAs(view.username, view.returnTo)}`,
  );
}

// --- messages -------------------------------------------------------------------------------

export function messagePage(args: {
  title: string;
  message: string;
  detail?: string;
  link?: { href: string; text: string };
}): string {
  return layout(
    args.title,
    escaped`<h1>${args.title}</h1>
<p>${args.message}</p>
${args.detail ? escaped`<p class="muted">${args.detail}</p>` : ''}
${args.link ? escaped`<p><a href="${args.link.href}">${args.link.text}</a></p>` : ''}`,
  );
}
