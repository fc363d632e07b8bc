/**
 * The root helper's default command runner: the platform's spawn helper (argument arrays, never a
 * shell), limited to the programs of HELPER_PROGRAMS, found only in the system directories.
 */
import { runTool } from '../platform/process/spawn.js';
import type { SystemTool } from '../platform/process/system-tools.js';
import type { CommandRunner } from './root-helper.server.js';

/** The only programs the helper runs, with their Debian packages. */
export const HELPER_PROGRAMS: Record<string, SystemTool> = {
  hostnamectl: { program: 'hostnamectl', debianPackage: 'systemd' },
  hostname: { program: 'hostname', debianPackage: 'hostname' },
  timedatectl: { program: 'timedatectl', debianPackage: 'systemd' },
  systemctl: { program: 'systemctl', debianPackage: 'systemd' },
  date: { program: 'date', debianPackage: 'coreutils' },
  'dpkg-query': { program: 'dpkg-query', debianPackage: 'dpkg' },
  'apt-get': { program: 'apt-get', debianPackage: 'apt' },
};

/** The platform's spawn helper (argument arrays, no shell) limited to HELPER_PROGRAMS. */
export const spawnRunner: CommandRunner = async (program, args) => {
  const tool = HELPER_PROGRAMS[program];
  if (!tool) throw new Error(`${program} is not a program the helper runs`);
  const result = await runTool(tool, {
    args,
    timeoutMs: program === 'apt-get' ? 600_000 : 60_000,
    searchPath: ['/usr/sbin', '/usr/bin', '/sbin', '/bin'],
    extraEnv: { DEBIAN_FRONTEND: 'noninteractive' },
  });
  return {
    code: result.timedOut ? null : result.code,
    stdout: result.stdout,
    stderr: result.stderr,
  };
};
