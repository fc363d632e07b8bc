/**
 * Which on-box tools the embedded appliance spawns are missing here. The deb package declares
 * them as dependencies; AppImage, Windows and macOS builds cannot, so the window lists what is
 * missing instead of letting each tool fail on its own. The search mirrors appliance-core's
 * (its PATH, then the usual system directories).
 */
import fs from 'node:fs';
import path from 'node:path';

/** The programs appliance-core runs, with the Debian package that provides each. */
export const ON_BOX_TOOLS = [
  { program: 'fping', debianPackage: 'fping' },
  { program: 'mtr', debianPackage: 'mtr-tiny' },
  { program: 'nmap', debianPackage: 'nmap' },
  { program: 'tracepath', debianPackage: 'iputils-tracepath' },
  { program: 'iperf3', debianPackage: 'iperf3' },
  { program: 'whois', debianPackage: 'whois' },
] as const;

const POSIX_SYSTEM_DIRS = [
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
];

export function findMissingTools(
  pathVariable: string | undefined,
  platform: NodeJS.Platform,
  isExecutable: (file: string) => boolean = isExecutableFile,
): string[] {
  const separator = platform === 'win32' ? ';' : ':';
  const dirs = [
    ...new Set([
      ...(pathVariable ?? '').split(separator).filter((dir) => dir !== ''),
      ...(platform === 'win32' ? [] : POSIX_SYSTEM_DIRS),
    ]),
  ];
  const suffixes = platform === 'win32' ? ['.exe', '.cmd', '.bat'] : [''];
  const join = (dir: string, file: string) =>
    platform === 'win32' ? path.win32.join(dir, file) : path.posix.join(dir, file);
  return ON_BOX_TOOLS.filter(
    (tool) =>
      !dirs.some((dir) =>
        suffixes.some((suffix) => isExecutable(join(dir, tool.program + suffix))),
      ),
  ).map((tool) => tool.program);
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
