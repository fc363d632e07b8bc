/**
 * The operations of docs/agent-protocol.md §4, dispatched by name. Every argument is data: paths
 * go to file-system calls unchanged and nothing reaches a shell.
 */
import { readFileSync } from 'node:fs';
import { arch as osArch, hostname, release, type } from 'node:os';

import { type DiskReports, folderUsage } from './disk.js';
import { parseEventArgs } from './eventlog.js';
import { readJournal } from './eventlog-linux.js';
import { deleteFile, deleteFolder } from './files.js';
import { OpError } from './paths.js';
import { listProcesses } from './processes.js';
import { listServices } from './services.js';
import { listWindowsProcesses, listWindowsServices, readWindowsEvents } from './windows.js';

export { OpError } from './paths.js';

export function agentArch(): 'amd64' | 'arm64' {
  return osArch() === 'arm64' ? 'arm64' : 'amd64';
}

export function osVersion(): string {
  if (process.platform === 'linux') {
    try {
      const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(
        readFileSync('/etc/os-release', 'utf8'),
      )?.[1];
      if (pretty) return `${pretty} (${release()})`.slice(0, 128);
    } catch {
      // fall through
    }
  }
  return `${type()} ${release()}`.slice(0, 128);
}

/** Hostname as the check-in body allows it: printable ASCII without angle brackets, max 255. */
export function reportedHostname(): string {
  const name = hostname()
    .replace(/[^\x20-\x7e]|[<>]/g, '')
    .slice(0, 255);
  return name || 'localhost';
}

export interface OpContext {
  agentUuid: string;
  agentVersion: string;
  stateDir: string;
  disk: DiskReports;
  /** Journal file to read instead of the system journal (tests). */
  journalFile?: string;
}

export async function performOp(
  op: string,
  args: Record<string, unknown>,
  context: OpContext,
): Promise<unknown> {
  const windows = process.platform === 'win32';
  switch (op) {
    case 'identify':
      return {
        agent_uuid: context.agentUuid,
        hostname: reportedHostname(),
        agent_version: context.agentVersion,
        os_version: osVersion(),
        arch: agentArch(),
      };
    case 'processes':
      return windows ? listWindowsProcesses() : listProcesses();
    case 'services':
      return windows ? listWindowsServices() : listServices();
    case 'disk.generate':
      return context.disk.generate();
    case 'disk.detail':
      return context.disk.detail();
    case 'folder.usage':
      return folderUsage(args.path, 2);
    case 'file.delete':
      return deleteFile(args.path);
    case 'folder.delete':
      return deleteFolder(args.path, context.stateDir);
    case 'eventlog.read': {
      const query = parseEventArgs(args);
      return windows
        ? readWindowsEvents(query)
        : readJournal(query, context.journalFile ? { file: context.journalFile } : {});
    }
    default:
      throw new OpError(`unknown op: ${op.slice(0, 64)}`);
  }
}
