/**
 * Where the desktop app finds its parts, relative to the application directory (the asar archive
 * once packaged). Each part is built into its folder's dist/, like appliance-core/dist.
 */
import path from 'node:path';

export interface AppPaths {
  /** The utility-process entry of the embedded appliance (appliance-core/src/server.ts, built). */
  coreEntry: string;
  /** The sandboxed preload must be one bundled script: sandboxed preloads cannot load modules. */
  preload: string;
  rendererIndex: string;
}

export function resolveAppPaths(appPath: string): AppPaths {
  return {
    coreEntry: path.join(appPath, 'appliance-core', 'dist', 'server.js'),
    preload: path.join(appPath, 'electron', 'dist', 'preload.cjs'),
    rendererIndex: path.join(appPath, 'renderer', 'dist', 'index.html'),
  };
}

/** Environment of the embedded appliance: its own data dir, loopback only, a free port. */
export function embeddedCoreEnv(
  baseEnv: Record<string, string | undefined>,
  userDataPath: string,
): Record<string, string | undefined> {
  return {
    ...baseEnv,
    APPLIANCE_DATA_DIR: path.join(userDataPath, 'appliance'),
    APPLIANCE_BIND: '127.0.0.1',
    APPLIANCE_HTTPS_PORT: '0',
    // A desktop console must not take the syslog/NetFlow ports from a headless appliance on the
    // same host; collectors belong to real appliances.
    APPLIANCE_SYSLOG_PORT: '0',
    APPLIANCE_NETFLOW_PORT: '0',
  };
}
