/**
 * Electron Forge configuration: development runs of the desktop app (`npm run desktop` with
 * @electron-forge/cli 7 installed, on Node 22; see docs/features/desktop.md). Installers are
 * built by electron-builder (build/electron-builder.yml), so there are no makers here.
 *
 * What is unpacked from the asar archive and which native modules are rebuilt for Electron come
 * from build/packaging.json, the list electron-builder's configuration repeats (a test keeps the
 * two equal). The types are the subset of @electron-forge/shared-types' ForgeConfig used here:
 * Forge is not a dependency on Node 20 (Forge 7 needs a git-hosted node-gyp, Forge 8 Node 22.12).
 */
import packaging from './build/packaging.json' with { type: 'json' };

interface ForgePackagerOptions {
  name?: string;
  executableName?: string;
  appBundleId?: string;
  asar?: boolean | { unpack?: string; unpackDir?: string };
  ignore?: (file: string) => boolean;
  prune?: boolean;
  protocols?: Array<{ name: string; schemes: string[] }>;
}

interface ForgeRebuildOptions {
  onlyModules?: string[];
  force?: boolean;
  buildFromSource?: boolean;
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

/** Packager passes app-relative paths ('/main/dist/index.cjs'); keep the ancestors of shipped paths. */
export function isIgnoredWhenPackaging(file: string): boolean {
  if (file === '') return false;
  if (file.endsWith('.map') || file.endsWith('.d.ts') || file.endsWith('.tsbuildinfo')) return true;
  return !shippedPaths.some(
    (shipped) =>
      file === shipped || file.startsWith(`${shipped}/`) || shipped.startsWith(`${file}/`),
  );
}

/** electron-packager's asar.unpack is one minimatch pattern: the shared list as `{a,b,...}`, any depth. */
export function asarUnpackGlob(patterns: readonly string[]): string {
  return `{${patterns.map((pattern) => `**/${pattern}`).join(',')}}`;
}

const config: ForgeConfig = {
  packagerConfig: {
    name: 'Appliance Console',
    executableName: 'appliance-console',
    appBundleId: 'local.netmon.appliance-console',
    asar: { unpack: asarUnpackGlob(packaging.asarUnpack) },
    ignore: isIgnoredWhenPackaging,
    prune: true,
    protocols: [{ name: 'Appliance Console', schemes: ['appliance-console'] }],
  },
  // The embedded core and the local terminal run inside Electron: their native modules are
  // rebuilt for Electron's ABI (`npm rebuild` afterwards restores the Node builds tests use).
  rebuildConfig: { onlyModules: [...packaging.nativeModules], force: true, buildFromSource: true },
  makers: [],
  plugins: [],
};

export default config;
