/**
 * A ForkCore over a plain Node child (child_process.fork with an IPC channel), for tests, the
 * bench and anything else that runs the supervisor outside Electron. appliance-core posts its
 * ready message through `process.send` there, as it does on `process.parentPort` in a utility
 * process; stdout and stderr are piped, as the app pipes them.
 */
import { fork } from 'node:child_process';
import os from 'node:os';

import type { CoreProcess, ForkCore } from './core-supervisor.js';

export const forkNodeChild: ForkCore = (modulePath, args, options): CoreProcess => {
  const child = fork(modulePath, args, {
    env: options.env ?? {},
    stdio: [
      'ignore',
      options.stdio === 'inherit' ? 'inherit' : 'pipe',
      options.stdio === 'inherit' ? 'inherit' : 'pipe',
      'ipc',
    ],
    execArgv: [],
  });
  const adapter = {
    on(event: 'message' | 'exit', listener: (value: never) => void) {
      if (event === 'exit') {
        const onExit = listener as (code: number) => void;
        child.on('exit', (code, signal) => onExit(code ?? 128 + (signalNumber(signal) ?? 0)));
      } else {
        const onMessage = listener as (message: unknown) => void;
        child.on('message', (message) => onMessage(message));
      }
      return adapter;
    },
    kill: () => child.kill('SIGTERM'),
    pid: child.pid,
    stdout: child.stdout,
    stderr: child.stderr,
  };
  return adapter;
};

function signalNumber(signal: NodeJS.Signals | null): number | undefined {
  return signal ? os.constants.signals[signal] : undefined;
}
