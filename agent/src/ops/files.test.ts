import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { deleteFile, deleteFolder } from './files.js';

const root = mkdtempSync(path.join(tmpdir(), 'agent-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('file and folder deletion', () => {
  it('deletes exactly the named file, shell syntax and a leading - being plain characters', () => {
    for (const name of [';id', '$(id)', '-rf', '`id`', 'a b|c&d']) {
      const target = path.join(root, name);
      writeFileSync(target, 'x');
      writeFileSync(path.join(root, 'keep'), 'k');
      expect(deleteFile(target)).toEqual({ deleted: target });
      expect(existsSync(target)).toBe(false);
      expect(existsSync(path.join(root, 'keep'))).toBe(true);
    }
  });

  it('refuses NUL, relative paths and folders; removes a symlink, never its target', () => {
    expect(() => deleteFile(`${root}/keep\0x`)).toThrow('path must not contain NUL');
    expect(() => deleteFile('-rf')).toThrow('path must be absolute');
    expect(() => deleteFile(root)).toThrow(/is a folder/);
    const target = path.join(root, 'target');
    writeFileSync(target, 't');
    symlinkSync(target, path.join(root, 'link'));
    deleteFile(path.join(root, 'link'));
    expect(existsSync(target)).toBe(true);
  });

  it('deletes a folder recursively but never /, the state dir or a folder holding it', () => {
    const state = path.join(root, 'holder', 'state');
    mkdirSync(state, { recursive: true });
    const folder = path.join(root, '$(id);-x');
    mkdirSync(path.join(folder, 'sub'), { recursive: true });
    writeFileSync(path.join(folder, 'sub', 'f'), 'x');
    expect(deleteFolder(folder, state)).toEqual({ deleted: folder });
    expect(existsSync(folder)).toBe(false);
    expect(() => deleteFolder('/', state)).toThrow('refusing to delete /');
    expect(() => deleteFolder(state, state)).toThrow("refusing to delete the agent's state dir");
    expect(() => deleteFolder(path.join(root, 'holder'), state)).toThrow(
      "refusing to delete the agent's state dir",
    );
    expect(() => deleteFolder(`${state}/../../holder`, state)).toThrow(
      "refusing to delete the agent's state dir",
    );
    expect(existsSync(state)).toBe(true);
    expect(() => deleteFolder(path.join(root, 'target'), state)).toThrow(/not a folder/);
  });
});
