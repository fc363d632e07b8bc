/**
 * Electron Forge configuration: development runs of the desktop app (`npm run desktop`).
 * Installers are built by electron-builder (build/electron-builder.yml), so no makers here.
 *
 * The types are the subset of @electron-forge/shared-types' ForgeConfig used here: Forge 7 (the
 * last major that runs on Node 20) depends on a git-hosted node-gyp and cannot be installed from
 * the npm registry alone. Forge loads this file by itself; nothing imports it.
 */

interface ForgePackagerOptions {
  name?: string;
  executableName?: string;
  appBundleId?: string;
  asar?: boolean | { unpack?: string; unpackDir?: string };
  ignore?: (file: string) => boolean;
  prune?: boolean;
}

interface ForgeRebuildOptions {
  onlyModules?: string[];
  force?: boolean;
}

interface ForgeResolvable {
  name: string;
  platforms?: string[];
  config?: unknown;
}

interface ForgeConfig {
  packagerConfig: ForgePackagerOptions;
  rebuildConfig: ForgeRebuildOptions;
  makers: ForgeResolvable[];
  plugins: ForgeResolvable[];
}

/** What the packaged app contains: the build outputs and production dependencies only. */
const shippedPaths = [
  '/package.json',
  '/node_modules',
  '/appliance-core/dist',
  '/main/dist',
  '/electron/dist',
  '/renderer/dist',
];

/** Packager passes app-relative paths ('/main/dist/index.js'); keep the ancestors of shipped paths. */
export function isIgnoredWhenPackaging(file: string): boolean {
  if (file === '') return false;
  return !shippedPaths.some(
    (shipped) =>
      file === shipped || file.startsWith(`${shipped}/`) || shipped.startsWith(`${file}/`),
  );
}

const config: ForgeConfig = {
  packagerConfig: {
    name: 'Appliance Console',
    executableName: 'appliance-console',
    appBundleId: 'local.netmon.appliance-console',
    // better-sqlite3 is a native module: it cannot be loaded from inside the asar archive.
    asar: { unpack: '**/node_modules/better-sqlite3/**' },
    ignore: isIgnoredWhenPackaging,
    prune: true,
  },
  // The embedded core runs inside Electron: its native module is rebuilt for Electron's ABI.
  rebuildConfig: { onlyModules: ['better-sqlite3'], force: true },
  makers: [],
  plugins: [],
};

export default config;
