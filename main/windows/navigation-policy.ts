/**
 * Which URLs the console window may navigate to or hand to the operating system. Pure functions,
 * so the policy is tested without Electron.
 */

/** The window shows its own entry page only: navigation elsewhere is refused. */
export function isAllowedNavigation(targetUrl: string, entryUrl: string): boolean {
  const target = parseUrl(targetUrl);
  const entry = parseUrl(entryUrl);
  if (!target || !entry) return false;
  if (entry.protocol === 'file:') {
    return target.protocol === 'file:' && target.pathname === entry.pathname;
  }
  return target.origin === entry.origin;
}

/** Links the user opens leave the app through the system browser, https only. */
export function isAllowedExternalUrl(targetUrl: string): boolean {
  return parseUrl(targetUrl)?.protocol === 'https:';
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
