/**
 * Packaging without the Electron binary: electron-builder's own loader and schema validate
 * build/electron-builder.yml (as electron-builder 25.1 will read it), the builder configuration
 * and the Forge configuration carry the one shared list of build/packaging.json (what is unpacked
 * from the asar archive, which native modules are rebuilt), and the afterPack hook really flips
 * the fuses it lists in an Electron binary's fuse wire. Worker threads load their modules from real
 * files: every worker entry the appliance starts, and what it imports, is on the unpacked list.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { getCurrentFuseWire, FuseV1Options } from '@electron/fuses';
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { DebugLogger } from 'builder-util';
import { describe, expect, it } from 'vitest';

import forgeConfig, { asarUnpackGlob, isIgnoredWhenPackaging } from '../../forge.config.js';
import { ROOT } from '../harness/process.js';

const require = createRequire(import.meta.url);
const packaging = JSON.parse(fs.readFileSync(path.join(ROOT, 'build/packaging.json'), 'utf8')) as {
  asarUnpack: string[];
  nativeModules: string[];
  fuses: Record<string, boolean>;
  onBoxToolPackages: string[];
};
const afterPack = require(path.join(ROOT, 'build/scripts/after-pack.cjs')) as {
  default: (context: unknown) => Promise<void>;
  fuseConfig: (platform: string, arch: string) => Record<string, unknown>;
};

async function builderConfig() {
  return getConfig(ROOT, path.join(ROOT, 'build/electron-builder.yml'), null);
}

describe('build/electron-builder.yml', () => {
  it('is valid for the installed electron-builder (25.1)', async () => {
    const config = await builderConfig();
    await expect(
      validateConfiguration(structuredClone(config), new DebugLogger(false)),
    ).resolves.toBeUndefined();
    const installed = JSON.parse(
      fs.readFileSync(path.join(ROOT, 'node_modules/electron-builder/package.json'), 'utf8'),
    ) as { version: string };
    expect(installed.version).toMatch(/^25\.1\./);
  });

  it('unpacks and rebuilds exactly the shared list, and sets fuses through the afterPack hook', async () => {
    const config = await builderConfig();
    expect(config.asarUnpack).toEqual(packaging.asarUnpack);
    expect(config.npmRebuild).toBe(true);
    expect(config.buildDependenciesFromSource).toBe(true);
    expect(config.afterPack).toBe('build/scripts/after-pack.cjs');
    expect(config).not.toHaveProperty('electronFuses');
    for (const name of packaging.nativeModules) {
      expect(packaging.asarUnpack).toContain(`node_modules/${name}/**`);
    }
  });

  it('ships the bundles package.json points at', async () => {
    const config = await builderConfig();
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      main: string;
    };
    expect(pkg.main).toBe('main/dist/index.cjs');
    // electron-builder's loader normalises `files` to [{filter: [...]}].
    const files = (config.files as Array<string | { filter: string[] }>).flatMap((entry) =>
      typeof entry === 'string' ? [entry] : entry.filter,
    );
    expect(files).toEqual(
      expect.arrayContaining(['main/dist/**/*', 'electron/dist/**/*', 'appliance-core/dist/**/*']),
    );
  });

  it('makes the deb depend on the on-box tools; Windows and macOS installers are configured', async () => {
    const config = await builderConfig();
    expect(config.deb?.depends).toEqual(expect.arrayContaining(packaging.onBoxToolPackages));
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.win?.target).toEqual(['nsis']);
    expect(config.mac?.target).toEqual(['dmg']);
    expect(config.protocols).toEqual([
      { name: 'Appliance Console', schemes: ['appliance-console'] },
    ]);
  });
});

describe('every native production dependency is in the shared list', () => {
  it('finds binding.gyp in no production dependency outside nativeModules', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const production = [
      ...Object.keys(pkg.dependencies),
      ...Object.keys(pkg.optionalDependencies ?? {}),
    ];
    const native = production.filter((name) =>
      fs.existsSync(path.join(ROOT, 'node_modules', name, 'binding.gyp')),
    );
    expect(native.length).toBeGreaterThanOrEqual(2);
    for (const name of native) expect(packaging.nativeModules).toContain(name);
  });
});

describe('forge.config.ts', () => {
  it('unpacks and rebuilds the same list', () => {
    expect(forgeConfig.packagerConfig.asar).toEqual({
      unpack: asarUnpackGlob(packaging.asarUnpack),
    });
    expect(asarUnpackGlob(['a/**', 'b.mjs'])).toBe('{**/a/**,**/b.mjs}');
    expect(forgeConfig.rebuildConfig.onlyModules).toEqual(packaging.nativeModules);
    expect(forgeConfig.makers).toEqual([]);
  });

  it('packages build outputs and dependencies only', () => {
    for (const shipped of [
      '/package.json',
      '/main/dist/index.cjs',
      '/electron/dist/preload.cjs',
      '/node_modules/ws/index.js',
      '/appliance-core',
    ]) {
      expect(isIgnoredWhenPackaging(shipped), shipped).toBe(false);
    }
    for (const ignored of [
      '/main/index.ts',
      '/appliance-core/src/app.ts',
      '/.git/config',
      '/test/harness/process.ts',
      '/main/dist/index.cjs.map',
      '/docs',
    ]) {
      expect(isIgnoredWhenPackaging(ignored), ignored).toBe(true);
    }
  });
});

describe('fuses', () => {
  it('the shared list turns off runAsNode, NODE_OPTIONS, --inspect and file: privileges, turns on asar integrity and asar-only', () => {
    expect(packaging.fuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      loadBrowserProcessSpecificV8Snapshot: false,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('the afterPack hook flips them in the packaged binary', async () => {
    // An Electron binary's fuse wire: sentinel, version 1, length, one byte per fuse ('0'/'1').
    const appOutDir = fs.mkdtempSync(path.join(os.tmpdir(), 'after-pack-'));
    const binary = path.join(appOutDir, 'appliance-console');
    const sentinel = Buffer.from('dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX');
    const wire = Buffer.from([1, 9, ...Buffer.from('111101001')]);
    fs.writeFileSync(
      binary,
      Buffer.concat([Buffer.alloc(64, 7), sentinel, wire, Buffer.alloc(64, 7)]),
    );

    await afterPack.default({
      electronPlatformName: 'linux',
      appOutDir,
      arch: 1,
      packager: {
        executableName: 'appliance-console',
        appInfo: { productFilename: 'Appliance Console' },
      },
    });

    const flipped = (await getCurrentFuseWire(binary)) as unknown as Record<number, number>;
    const on = 49;
    const off = 48;
    expect(flipped[FuseV1Options.RunAsNode]).toBe(off);
    expect(flipped[FuseV1Options.EnableCookieEncryption]).toBe(on);
    expect(flipped[FuseV1Options.EnableNodeOptionsEnvironmentVariable]).toBe(off);
    expect(flipped[FuseV1Options.EnableNodeCliInspectArguments]).toBe(off);
    expect(flipped[FuseV1Options.EnableEmbeddedAsarIntegrityValidation]).toBe(on);
    expect(flipped[FuseV1Options.OnlyLoadAppFromAsar]).toBe(on);
    expect(flipped[FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]).toBe(off);
    expect(flipped[FuseV1Options.GrantFileProtocolExtraPrivileges]).toBe(off);
    // A fuse this version of the list does not know stays as Electron built it.
    expect(flipped[8]).toBe(on);
  });

  it('names the binary per platform', () => {
    const electronBinaryOf = (
      require(path.join(ROOT, 'build/scripts/after-pack.cjs')) as {
        electronBinaryOf: (context: unknown) => string;
      }
    ).electronBinaryOf;
    const packager = {
      executableName: 'appliance-console',
      appInfo: { productFilename: 'Appliance Console' },
    };
    expect(electronBinaryOf({ electronPlatformName: 'win32', appOutDir: '/o', packager })).toBe(
      '/o/Appliance Console.exe',
    );
    expect(electronBinaryOf({ electronPlatformName: 'darwin', appOutDir: '/o', packager })).toBe(
      '/o/Appliance Console.app',
    );
    expect(afterPack.fuseConfig('darwin', 'arm64')).toMatchObject({
      resetAdHocDarwinSignature: true,
    });
  });
});

/** Does one asarUnpack entry (an exact path or `dir/**`) cover a packaged path? */
function unpacks(pattern: string, file: string): boolean {
  return pattern.endsWith('/**') ? file.startsWith(pattern.slice(0, -2)) : pattern === file;
}

/**
 * The worker threads' entry modules of the appliance and every module they import, as packaged
 * paths (`appliance-core/dist/...`): found from `new URL('./x.mjs', import.meta.url)` in the
 * files that start workers, then the relative imports of those modules, transitively.
 */
function workerModules(): string[] {
  const src = path.join(ROOT, 'appliance-core/src');
  const files = fs.readdirSync(src, { recursive: true, encoding: 'utf8' });
  const pending: string[] = [];
  for (const rel of files) {
    if (!/\.(ts|mjs)$/.test(rel) || /\.test\.ts$/.test(rel)) continue;
    const text = fs.readFileSync(path.join(src, rel), 'utf8');
    if (!text.includes('new Worker(')) continue;
    for (const m of text.matchAll(/new URL\('(\.{1,2}\/[^']+\.mjs)', import\.meta\.url\)/g)) {
      pending.push(path.join(path.dirname(path.join(src, rel)), m[1]!));
    }
  }
  const seen = new Set<string>();
  while (pending.length) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^import [^;]*? from '(\.{1,2}\/[^']+\.mjs)';/gms)) {
      pending.push(path.join(path.dirname(file), m[1]!));
    }
  }
  return [...seen].map((file) =>
    path
      .relative(ROOT, file)
      .split(path.sep)
      .join('/')
      .replace(/^appliance-core\/src\//, 'appliance-core/dist/'),
  );
}

describe('worker threads in the packaged app', () => {
  it('finds the workers the appliance starts (the scan itself works)', () => {
    const modules = workerModules();
    expect(modules).toContain('appliance-core/dist/platform/db/storage-writer.worker.mjs');
    expect(modules).toContain('appliance-core/dist/features/logs/syslog-parser.engine.mjs');
  });

  it('keeps every worker module and what it imports outside the asar archive', () => {
    const packed = workerModules().filter(
      (file) => !packaging.asarUnpack.some((pattern) => unpacks(pattern, file)),
    );
    expect(packed).toEqual([]);
  });
});
