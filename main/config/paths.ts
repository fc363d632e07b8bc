/**
 * Where the desktop app finds its parts, relative to the application directory (the asar archive
 * once packaged). `npm run build` writes each: appliance-core/dist (tsc), main/dist/index.cjs and
 * electron/dist/preload.cjs (esbuild, build/scripts/bundle-desktop.mjs), renderer/dist (Vite).
 */
import path from 'node:path';

export interface AppPaths {
  /** The utility-process entry of the embedded appliance (appliance-core/src/server.ts, built). */
  coreEntry: string;
  /** The sandboxed preload must be one bundled script: sandboxed preloads cannot load modules. */
  preload: string;
  /** The console's build, served as app://console. */
  rendererRoot: string;
}

export function resolveAppPaths(appPath: string): AppPaths {
  return {
    coreEntry: path.join(appPath, 'appliance-core', 'dist', 'server.js'),
    preload: path.join(appPath, 'electron', 'dist', 'preload.cjs'),
    rendererRoot: path.join(appPath, 'renderer', 'dist'),
  };
}
