#!/usr/bin/env node
/**
 * netmon-appliance-root-helper: the root helper's entry (run as root by
 * netmon-appliance-root-helper.service, socket-activated by netmon-appliance-root-helper.socket).
 *
 * Environment: LISTEN_FDS/LISTEN_PID from systemd (the socket unit's fd 3); without them it
 * listens itself on APPLIANCE_ROOT_HELPER_SOCKET (default from the protocol), mode 0660, group
 * ROOT_HELPER_GROUP's gid when given (numeric).
 */
import { ROOT_HELPER_DEFAULT_SOCKET } from '../platform/host/root-helper.protocol.js';
import { spawnRunner } from './root-helper.runner.js';
import { listenRootHelper, RootHelper, serveRootHelper } from './root-helper.server.js';

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const helper = new RootHelper({ run: spawnRunner, log });
  const server = serveRootHelper(helper);
  const activated =
    process.env.LISTEN_FDS === '1' && process.env.LISTEN_PID === String(process.pid);
  const gid = process.env.ROOT_HELPER_GROUP_GID;
  await listenRootHelper(
    server,
    activated
      ? { systemdFd: 3 }
      : {
          socketPath: process.env.APPLIANCE_ROOT_HELPER_SOCKET ?? ROOT_HELPER_DEFAULT_SOCKET,
          ...(gid && /^\d+$/.test(gid) ? { gid: Number(gid) } : {}),
        },
  );
  log(`root helper listening${activated ? ' on the systemd socket' : ''}`);
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`root helper: ${(err as Error).message}\n`);
  process.exit(1);
});
