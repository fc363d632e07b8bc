/**
 * The esbuild bundles `npm run build` makes for Electron: main/dist/index.cjs loads with nothing
 * but Electron, node-pty and Node built-ins outside it, and runs its module-level start-up against
 * a recording stand-in for `electron`; the sandboxed preload is one CommonJS file that requires
 * `electron` only.
 */
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { ROOT } from '../harness/process.js';

const MAIN = path.join(ROOT, 'main/dist/index.cjs');
const PRELOAD = path.join(ROOT, 'electron/dist/preload.cjs');

beforeAll(() => {
  const built = spawnSync(process.execPath, [path.join(ROOT, 'build/scripts/bundle-desktop.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(built.status, built.stderr).toBe(0);
});

function requiredModules(file: string): string[] {
  const source = fs.readFileSync(file, 'utf8');
  return [...new Set([...source.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string))];
}

describe('the bundles', () => {
  it('main: everything bundled but Electron, node-pty, ws helpers and Node built-ins', () => {
    const builtins = new Set(builtinModules);
    const external = requiredModules(MAIN).filter(
      (name) => !builtins.has(name.replace(/^node:/, '')),
    );
    expect(external.sort()).toEqual(['bufferutil', 'electron', 'node-pty', 'utf-8-validate']);
  });

  it('preload: one CommonJS file that requires electron only', () => {
    expect(requiredModules(PRELOAD)).toEqual(['electron']);
    expect(fs.readFileSync(PRELOAD, 'utf8')).not.toMatch(/\bimport\s*\(|^import /m);
  });

  it('main runs its start-up against a stand-in electron', () => {
    // A CommonJS runner that answers require('electron') with recording stand-ins.
    const runner = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-smoke-')), 'run.cjs');
    fs.writeFileSync(
      runner,
      `
const Module = require('node:module');
const calls = [];
const record = (name) => (...args) => { calls.push([name, ...args.filter((a) => typeof a !== 'function')]); };
const electron = {
  app: {
    enableSandbox: record('enableSandbox'),
    requestSingleInstanceLock: () => process.env.LOCK === '1',
    quit: record('quit'),
    on: (event) => calls.push(['on', event]),
    setAsDefaultProtocolClient: record('setAsDefaultProtocolClient'),
    whenReady: () => new Promise(() => {}),
  },
  protocol: { registerSchemesAsPrivileged: record('registerSchemesAsPrivileged') },
};
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'electron') return electron;
  return load.call(this, request, ...rest);
};
require(${JSON.stringify(MAIN)});
setTimeout(() => { process.stdout.write(JSON.stringify(calls)); process.exit(0); }, 50);
`,
    );
    const run = (lock: string) => {
      const result = spawnSync(process.execPath, [runner], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, LOCK: lock },
        timeout: 20_000,
      });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as unknown[][];
    };
    const scheme = [
      'registerSchemesAsPrivileged',
      [
        {
          scheme: 'app',
          privileges: {
            standard: true,
            secure: true,
            supportFetchAPI: true,
            stream: true,
            codeCache: true,
            corsEnabled: false,
            bypassCSP: false,
            allowServiceWorkers: false,
          },
        },
      ],
    ];
    expect(run('0')).toEqual([['enableSandbox'], scheme, ['quit']]);
    expect(run('1')).toEqual([
      ['enableSandbox'],
      scheme,
      ['on', 'second-instance'],
      ['on', 'open-url'],
      ['setAsDefaultProtocolClient', 'appliance-console'],
    ]);
  });
});
