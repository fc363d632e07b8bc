/**
 * The console's Content-Security-Policy as the desktop's protocol handler applies it: the one
 * string the console defines in renderer/csp.mjs (the appliance serves the web console with the
 * same template, read from renderer/dist/console.json), with a fresh nonce per answer templated
 * into index.html where the console's build left its placeholder (Vite's html.cspNonce).
 *
 * Imported, not copied: esbuild bundles renderer/csp.mjs into main/dist/index.cjs, so the packaged
 * app cannot drift from the console it serves.
 */
import { consoleCsp, CSP_NONCE_PLACEHOLDER } from '../../renderer/csp.mjs';

export { consoleCsp };

/** The console's index.html for one answer: every nonce placeholder replaced by `nonce`. */
export function renderConsoleIndexHtml(html: string, nonce: string): string {
  return html.split(CSP_NONCE_PLACEHOLDER).join(nonce);
}

/** What main/index.ts hands the protocol handler for the console's pages (and the tests use). */
export const CONSOLE_PAGE_POLICY = {
  contentSecurityPolicy: consoleCsp,
  renderIndexHtml: renderConsoleIndexHtml,
} as const;
