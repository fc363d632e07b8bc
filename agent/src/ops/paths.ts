/**
 * Path arguments from the appliance are data (docs/agent-protocol.md §4, Operations): a string,
 * absolute, without NUL, never interpreted (no `~`, no globbing, never a shell). The same text is
 * handed to the file-system calls unchanged: `;id`, `$(id)` or a leading `-` are only characters.
 */
import path from 'node:path';

export class OpError extends Error {}

export function requirePath(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new OpError('path is required');
  if (value.includes('\0')) throw new OpError('path must not contain NUL');
  if (value.length > 4096) throw new OpError('path is too long');
  if (!path.isAbsolute(value)) throw new OpError('path must be absolute');
  return value;
}
