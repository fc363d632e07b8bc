/**
 * Deep links to a device page: `appliance-console://device/<connectionId>/<deviceId>`. The
 * operating system hands them over as a command-line argument (second instance, Linux and
 * Windows) or an open-url event (macOS); anything that does not parse exactly is ignored.
 */
import {
  CONNECTION_ID_PATTERN,
  DEEP_LINK_SCHEME,
  type DeepLink,
} from '../../electron/contract/bridge.js';

export function parseDeepLink(value: string): DeepLink | undefined {
  if (typeof value !== 'string' || value.length > 512) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== `${DEEP_LINK_SCHEME}:` || url.host !== 'device') return undefined;
  if (url.username !== '' || url.password !== '' || url.port !== '' || url.search !== '') {
    return undefined;
  }
  const match = /^\/([^/]+)\/([1-9][0-9]{0,9})\/?$/.exec(url.pathname);
  if (!match) return undefined;
  const [, connectionId, deviceId] = match as unknown as [string, string, string];
  if (!CONNECTION_ID_PATTERN.test(connectionId)) return undefined;
  return { connectionId, route: `/devices/${deviceId}` };
}

/** The first deep link among command-line arguments. */
export function findDeepLink(argv: readonly string[]): DeepLink | undefined {
  for (const arg of argv) {
    if (!arg.startsWith(`${DEEP_LINK_SCHEME}:`)) continue;
    const link = parseDeepLink(arg);
    if (link) return link;
  }
  return undefined;
}
