/**
 * The two static assets of the /auth pages, served from routes: the pages carry a strict CSP
 * (no inline script or style), so their only script and stylesheet come from these files.
 */

/** GET /auth/device-code.js: uppercases the user code as it is typed and keeps letters and digits only. */
export const DEVICE_CODE_JS = `// Normalizes the user code field as it is typed: upper case, letters and digits only, at most 8.
(function () {
  'use strict';
  var input = document.getElementById('user_code');
  if (!input) return;
  function normalize() {
    var cleaned = input.value.toUpperCase().replace(/[^A-Z0-9]/g, '').slice(0, 8);
    if (cleaned !== input.value) input.value = cleaned;
  }
  input.addEventListener('input', normalize);
  normalize();
})();
`;

/** GET /auth/assets/auth.css: one plain stylesheet for every /auth page. */
export const AUTH_CSS = `:root {
  color-scheme: light dark;
  --bg: #f3f5f8;
  --card: #ffffff;
  --text: #1b2330;
  --muted: #5b6678;
  --line: #d5dbe4;
  --accent: #1f5fbf;
  --accent-text: #ffffff;
  --danger: #b3261e;
  --warn-bg: #fff4d6;
  --warn-text: #6b4e00;
  --ok: #1e7a3c;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #11151b;
    --card: #1b212a;
    --text: #e6eaf0;
    --muted: #a3adbd;
    --line: #2f3845;
    --accent: #5b9bff;
    --accent-text: #0b1220;
    --danger: #ff8a80;
    --warn-bg: #3a3015;
    --warn-text: #ffd98a;
    --ok: #6fd08f;
  }
}
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body {
  background: var(--bg);
  color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
main {
  max-width: 30rem;
  margin: 4rem auto;
  padding: 2rem;
  background: var(--card);
  border: 1px solid var(--line);
  border-radius: 10px;
}
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
.brand { color: var(--muted); font-size: 0.85rem; letter-spacing: 0.04em; text-transform: uppercase; margin-bottom: 0.5rem; }
.muted { color: var(--muted); font-size: 0.9rem; }
.error { color: var(--danger); font-weight: 600; }
.success { color: var(--ok); font-weight: 600; }
.badge {
  display: inline-block;
  padding: 0.1rem 0.5rem;
  border-radius: 999px;
  background: var(--warn-bg);
  color: var(--warn-text);
  font-size: 0.8rem;
  font-weight: 600;
  vertical-align: middle;
}
.notice { background: var(--warn-bg); color: var(--warn-text); padding: 0.75rem 1rem; border-radius: 6px; font-size: 0.9rem; }
label { display: block; font-weight: 600; margin: 1rem 0 0.25rem; }
input[type="text"], input[type="password"] {
  width: 100%;
  padding: 0.6rem 0.7rem;
  font-size: 1rem;
  color: var(--text);
  background: var(--bg);
  border: 1px solid var(--line);
  border-radius: 6px;
}
input + p.muted { margin-top: 0.5rem; }
input.code { font: 600 1.5rem/1.2 ui-monospace, "DejaVu Sans Mono", monospace; letter-spacing: 0.3em; text-align: center; }
input:focus, button:focus { outline: 3px solid var(--accent); outline-offset: 1px; }
.actions { display: flex; gap: 0.75rem; margin-top: 1.5rem; }
button {
  flex: 1;
  padding: 0.65rem 1rem;
  font-size: 1rem;
  font-weight: 600;
  border-radius: 6px;
  border: 1px solid var(--accent);
  background: var(--accent);
  color: var(--accent-text);
  cursor: pointer;
}
button.secondary { background: transparent; color: var(--text); border-color: var(--line); }
dl { margin: 0 0 1rem; }
dt { color: var(--muted); font-size: 0.85rem; margin-top: 0.75rem; }
dd { margin: 0; word-break: break-all; }
ul.scopes { margin: 0.25rem 0 1rem; padding-left: 1.2rem; }
ul.scopes code { font-size: 0.9rem; }
footer { margin-top: 1.5rem; padding-top: 1rem; border-top: 1px solid var(--line); color: var(--muted); font-size: 0.85rem; }
a { color: var(--accent); }
`;
