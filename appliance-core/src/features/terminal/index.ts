/** The console terminal: a ticketed WebSocket to a shell on the appliance for `sa` users. */
import { createRequire } from 'node:module';
import type { PtySpawn } from './terminal.sessions.js';

export { terminalRoutes, SOCKET_PATH, TICKETS_PATH } from './terminal.routes.js';
export { MAX_SESSIONS_PER_USER } from './terminal.sessions.js';

/** node-pty's spawn, loaded on first use (a native module, built from source at npm ci). */
export function nodePtySpawn(): PtySpawn {
  let spawn: PtySpawn | null = null;
  return (file, args, options) => {
    spawn ??= (createRequire(import.meta.url)('node-pty') as { spawn: PtySpawn }).spawn;
    return spawn(file, args, options);
  };
}
