/**
 * Permission requests (camera, microphone, notifications, geolocation, ...) are all denied.
 * Permission checks (synchronous "may this origin ...?") are denied too, except writing to the
 * clipboard from the console itself (its copy buttons, for example a token shown once).
 */
import { CONSOLE_ORIGIN } from '../../electron/contract/bridge.js';
import { consoleOriginOf } from './navigation-policy.js';

export function isPermissionRequestGranted(_permission: string): boolean {
  return false;
}

export function isPermissionCheckGranted(permission: string, requestingOrigin: string): boolean {
  return (
    permission === 'clipboard-sanitized-write' &&
    consoleOriginOf(requestingOrigin) === CONSOLE_ORIGIN
  );
}
