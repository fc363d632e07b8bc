/**
 * Runs a host program with an argument array (never a shell), bounded in time and output.
 */
import { execFile } from 'node:child_process';

export class ProgramMissing extends Error {}

export function runProgram(
  program: string,
  args: string[],
  options: { timeoutMs?: number; maxBytes?: number; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      {
        shell: false,
        timeout: options.timeoutMs ?? 20_000,
        maxBuffer: options.maxBytes ?? 32 * 1024 * 1024,
        encoding: 'utf8',
        windowsHide: true,
        ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
      },
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new ProgramMissing(`${program} is not installed`));
          return;
        }
        if (error && typeof error.code !== 'number') {
          reject(error instanceof Error ? error : new Error('execFile failed'));
          return;
        }
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}
