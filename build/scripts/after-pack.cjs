// electron-builder afterPack hook: sets Electron's fuses on the packaged binary from
// build/packaging.json. electron-builder 25.1 (the last release that installs on Node 20) has no
// `electronFuses` option (it came with 26), so the fuses are flipped here with @electron/fuses,
// before signing (afterPack runs before afterSign).
/* eslint-disable @typescript-eslint/no-require-imports -- electron-builder 25 loads hooks with require() */
const path = require('node:path');

const { flipFuses, FuseV1Options, FuseVersion } = require('@electron/fuses');

const packaging = require('../packaging.json');

/** `runAsNode` -> FuseV1Options.RunAsNode, for every fuse in packaging.json. */
function fuseConfig(platform, arch) {
  const config = {
    version: FuseVersion.V1,
    // arm64 macOS binaries carry an ad-hoc signature that flipping invalidates.
    resetAdHocDarwinSignature: platform === 'darwin' && arch === 'arm64',
  };
  for (const [name, value] of Object.entries(packaging.fuses)) {
    const option = FuseV1Options[name.charAt(0).toUpperCase() + name.slice(1)];
    if (option === undefined) throw new Error(`unknown fuse ${name} in build/packaging.json`);
    config[option] = value;
  }
  return config;
}

function electronBinaryOf(context) {
  const platform = context.electronPlatformName;
  if (platform === 'darwin' || platform === 'mas') {
    return path.join(context.appOutDir, `${context.packager.appInfo.productFilename}.app`);
  }
  if (platform === 'win32') {
    return path.join(context.appOutDir, `${context.packager.appInfo.productFilename}.exe`);
  }
  return path.join(context.appOutDir, context.packager.executableName);
}

async function afterPack(context) {
  // electron-builder's Arch enum: 0 ia32, 1 x64, 2 armv7l, 3 arm64, 4 universal.
  const arch = context.arch === 3 ? 'arm64' : 'other';
  await flipFuses(electronBinaryOf(context), fuseConfig(context.electronPlatformName, arch));
}

module.exports = afterPack;
module.exports.default = afterPack;
module.exports.fuseConfig = fuseConfig;
module.exports.electronBinaryOf = electronBinaryOf;
