/**
 * `file.delete` and `folder.delete` (docs/agent-protocol.md §4): immediate and permanent. The
 * path is used literally (ops/paths.ts). A file deletion refuses a folder and removes a symbolic
 * link itself, never its target; a folder deletion is recursive and refuses `/`, the agent's own
 * state dir and any folder holding it.
 */
import { lstatSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';

import { OpError, requirePath } from './paths.js';

function statOrMissing(target: string) {
  try {
    return lstatSync(target);
  } catch {
    throw new OpError(`not found: ${target}`);
  }
}

export function deleteFile(value: unknown): { deleted: string } {
  const target = requirePath(value);
  const stat = statOrMissing(target);
  if (stat.isDirectory()) throw new OpError(`is a folder: ${target}`);
  unlinkSync(target);
  return { deleted: target };
}

export function deleteFolder(value: unknown, stateDir: string): { deleted: string } {
  const target = requirePath(value);
  const resolved = path.resolve(target);
  if (resolved === path.parse(resolved).root) throw new OpError('refusing to delete /');
  const state = path.resolve(stateDir);
  if (state === resolved || state.startsWith(resolved + path.sep))
    throw new OpError("refusing to delete the agent's state dir");
  const stat = statOrMissing(target);
  if (!stat.isDirectory()) throw new OpError(`not a folder: ${target}`);
  rmSync(target, { recursive: true, force: false });
  return { deleted: target };
}
