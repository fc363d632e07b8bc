/**
 * Proves that the layering rules in eslint.config.js fire: each snippet is linted as if it lived
 * at the given path (the file need not exist; imports resolve against the real tree).
 */
import path from 'node:path';

import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');

let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({
    cwd: repoRoot,
    // The layering rules need no type information; without it, snippets at paths that do not
    // exist on disk need no TypeScript project.
    overrideConfig: [{ files: ['**/*.{ts,tsx}'], ...tseslint.configs.disableTypeChecked }],
  });
});

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, filePath) });
  if (!result) throw new Error('no lint result');
  const fatal = result.messages.filter((message) => message.fatal);
  expect(fatal).toEqual([]);
  return result.messages.map((message) => message.ruleId ?? 'fatal');
}

const restrictedPaths = 'import-x/no-restricted-paths';
const restrictedImports = '@typescript-eslint/no-restricted-imports';
const restrictedSyntax = 'no-restricted-syntax';

describe('layering: appliance-core', () => {
  it('platform/ never imports features/', async () => {
    expect(
      await ruleIds(
        'appliance-core/src/platform/x.ts',
        "import { findUserById } from '../features/users/users.repository.js';\nexport const f = findUserById;\n",
      ),
    ).toContain(restrictedPaths);
    expect(
      await ruleIds(
        'appliance-core/src/platform/http/x.ts',
        "import { usersRoutes } from '../../features/users/index.js';\nexport const f = usersRoutes;\n",
      ),
    ).toContain(restrictedPaths);
  });

  it('platform/snmp and platform/net never import features/ either', async () => {
    for (const file of [
      'appliance-core/src/platform/snmp/x.ts',
      'appliance-core/src/platform/net/x.ts',
    ])
      expect(
        await ruleIds(
          file,
          "import { findDevice } from '../../features/devices/index.js';\nexport const f = findDevice;\n",
        ),
      ).toContain(restrictedPaths);
  });

  it('net-snmp only under platform/snmp', async () => {
    const code = "import snmp from 'net-snmp';\nexport const s = snmp;\n";
    for (const file of [
      'appliance-core/src/features/devices/x.ts',
      'appliance-core/src/features/trackers/x.ts',
      'appliance-core/src/platform/db/x.ts',
      'test/harness/x.ts',
    ])
      expect(await ruleIds(file, code), file).toContain(restrictedImports);
    expect(await ruleIds('appliance-core/src/platform/snmp/x.ts', code)).not.toContain(
      restrictedImports,
    );
  });

  it('fping only through platform/net', async () => {
    const byCatalogue =
      "import { runTool } from '../../platform/process/spawn.js';\nimport { SYSTEM_TOOLS } from '../../platform/process/system-tools.js';\nexport const r = runTool(SYSTEM_TOOLS.fping, { args: [] });\n";
    const byName =
      "import { runTool } from '../../platform/process/spawn.js';\nexport const r = runTool({ program: 'fping', debianPackage: 'fping' }, { args: [] });\n";
    for (const code of [byCatalogue, byName]) {
      expect(await ruleIds('appliance-core/src/features/discovery/x.ts', code)).toContain(
        restrictedSyntax,
      );
      expect(await ruleIds('appliance-core/src/platform/net/x.ts', code)).not.toContain(
        restrictedSyntax,
      );
    }
  });

  it('a feature reaches another feature through its index.ts only', async () => {
    expect(
      await ruleIds(
        'appliance-core/src/features/auth/x.ts',
        "import { findUserById } from '../users/users.repository.js';\nexport const f = findUserById;\n",
      ),
    ).toContain(restrictedPaths);
    expect(
      await ruleIds(
        'appliance-core/src/features/auth/x.ts',
        "import { findUserById } from '../users/index.js';\nexport const f = findUserById;\n",
      ),
    ).not.toContain(restrictedPaths);
    expect(
      await ruleIds(
        'appliance-core/src/features/auth/x.ts',
        "import { login } from './auth.service.js';\nimport { openDatabase } from '../../platform/db/database.js';\nexport const f = [login, openDatabase];\n",
      ),
    ).not.toContain(restrictedPaths);
  });

  it('never imports the desktop app or electron', async () => {
    expect(
      await ruleIds(
        'appliance-core/src/x.ts',
        "import { CONSOLE_CHANNELS } from '../../electron/contract/bridge.js';\nexport const c = CONSOLE_CHANNELS;\n",
      ),
    ).toContain(restrictedPaths);
    expect(
      await ruleIds(
        'appliance-core/src/x.ts',
        "import { app } from 'electron';\nexport const a = app;\n",
      ),
    ).toContain(restrictedImports);
  });

  it('better-sqlite3 only under platform/db', async () => {
    const code = "import Database from 'better-sqlite3';\nexport const D = Database;\n";
    expect(await ruleIds('appliance-core/src/features/users/x.ts', code)).toContain(
      restrictedImports,
    );
    expect(await ruleIds('test/harness/x.ts', code)).toContain(restrictedImports);
    expect(await ruleIds('appliance-core/src/platform/db/x.ts', code)).not.toContain(
      restrictedImports,
    );
  });
});

describe('layering: renderer', () => {
  it('never imports appliance-core, node builtins, better-sqlite3 or electron', async () => {
    expect(
      await ruleIds(
        'renderer/src/x.ts',
        "import { loadConfig } from '../../appliance-core/src/platform/config/config.js';\nexport const f = loadConfig;\n",
      ),
    ).toContain(restrictedPaths);
    for (const source of ['node:fs', 'fs/promises', 'better-sqlite3', 'electron']) {
      expect(
        await ruleIds(
          'renderer/src/x.ts',
          `import * as m from '${source}';\nexport const x = m;\n`,
        ),
      ).toContain(restrictedImports);
    }
  });
});

describe('layering: agent', () => {
  it('agent/ imports nothing from the appliance or the desktop app, and they never import agent/', async () => {
    for (const target of [
      '../../appliance-core/src/platform/config/config.js',
      '../../main/core/core-supervisor.js',
      '../../electron/contract/bridge.js',
      '../../renderer/src/lib/api-client.js',
    ])
      expect(
        await ruleIds('agent/src/x.ts', `import * as m from '${target}';\nexport const x = m;\n`),
        target,
      ).toContain(restrictedPaths);
    for (const file of [
      'appliance-core/src/features/agents/x.ts',
      'main/core/x.ts',
      'electron/contract/x.ts',
      'renderer/src/x.ts',
    ]) {
      const depth = file.split('/').length - 1;
      const up = '../'.repeat(depth);
      expect(
        await ruleIds(
          file,
          `import { Agent } from '${up}agent/src/agent.js';\nexport const A = Agent;\n`,
        ),
        file,
      ).toContain(restrictedPaths);
    }
    expect(
      await ruleIds(
        'agent/src/x.ts',
        "import { Agent } from './agent.js';\nexport const A = Agent;\n",
      ),
    ).not.toContain(restrictedPaths);
  });

  it('agent/ uses only Node built-ins', async () => {
    expect(
      await ruleIds(
        'agent/src/x.ts',
        "import Fastify from 'fastify';\nexport const f = Fastify;\n",
      ),
    ).toContain(restrictedImports);
    expect(
      await ruleIds(
        'agent/src/x.ts',
        "import { createHash } from 'node:crypto';\nexport const h = createHash;\n",
      ),
    ).not.toContain(restrictedImports);
  });
});

describe('layering: desktop', () => {
  it('plain main/ modules import electron as types only; the preload only its two APIs', async () => {
    expect(
      await ruleIds('main/core/x.ts', "import { app } from 'electron';\nexport const a = app;\n"),
    ).toContain(restrictedImports);
    expect(
      await ruleIds(
        'main/core/x.ts',
        "import type { App } from 'electron';\nexport type A = App;\n",
      ),
    ).not.toContain(restrictedImports);
    expect(
      await ruleIds(
        'electron/preload/x.ts',
        "import { shell } from 'electron';\nexport const s = shell;\n",
      ),
    ).toContain(restrictedImports);
  });
});

describe('child processes', () => {
  it('bans exec/execSync imports and calls, and shell: true', async () => {
    expect(
      await ruleIds(
        'test/x.ts',
        "import { exec } from 'node:child_process';\nexport const e = exec;\n",
      ),
    ).toContain(restrictedImports);
    expect(
      await ruleIds(
        'appliance-core/src/x.ts',
        "import { execSync } from 'child_process';\nexport const e = execSync;\n",
      ),
    ).toContain(restrictedImports);
    expect(
      await ruleIds(
        'appliance-core/src/x.ts',
        "import cp from 'node:child_process';\ncp.exec('ls');\n",
      ),
    ).toContain(restrictedSyntax);
    expect(
      await ruleIds(
        'appliance-core/src/x.ts',
        "import { spawn } from 'node:child_process';\nspawn('ping', ['-c', '1', 'host'], { shell: true });\n",
      ),
    ).toContain(restrictedSyntax);
    expect(
      await ruleIds(
        'appliance-core/src/x.ts',
        "import { spawn } from 'node:child_process';\nspawn('ping', ['-c', '1', 'host'], { shell: false });\n",
      ),
    ).toEqual([]);
  });
});

describe('tests', () => {
  it('bans focused, skipped and placeholder tests', async () => {
    for (const call of [
      'it.only',
      'describe.only',
      'it.skip',
      'test.skip',
      'test.todo',
      'it.concurrent.only',
    ]) {
      expect(
        await ruleIds(
          'appliance-core/src/x.test.ts',
          `import { describe, it, test } from 'vitest';\nvoid [describe, it, test];\n${call}('x', () => {});\n`,
        ),
      ).toContain(restrictedSyntax);
    }
  });
});
