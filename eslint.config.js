// ESLint flat config for the whole repository.
//
// Do not relax these rules; add a new allowed pattern with a reason.
//
// The layering below is the one in ARCHITECTURE.md ("who may import what"). Folder boundaries use
// import-x/no-restricted-paths (it resolves each import to a file, so `../../x.js` and `./x.js`
// are judged by where they land); package boundaries (electron, node:*, better-sqlite3,
// child_process) use no-restricted-imports per area. Each message says why the rule exists.
import { readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;
const featuresDir = 'appliance-core/src/features';

// ---------------------------------------------------------------------------------------------
// Folder layering (import-x/no-restricted-paths). Paths are relative to the repository root.

/** One zone per feature folder: another feature is reachable only through its index.ts. */
function featureBoundaryZones() {
  const features = readdirSync(path.join(root, featuresDir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  return features.map((feature) => ({
    target: `${featuresDir}/${feature}`,
    from: featuresDir,
    except: [
      `./${feature}`,
      ...features.filter((other) => other !== feature).map((other) => `./${other}/index.ts`),
    ],
    message:
      `A feature reaches another feature only through that feature's index.ts ` +
      `(import '../<feature>/index.js'), so each feature's internals can change freely. ` +
      `The plugin list features/index.ts is read by app.ts only: importing it from a feature is a cycle.`,
  }));
}

const layeringZones = [
  {
    target: 'appliance-core',
    from: ['main', 'electron', 'renderer'],
    message:
      'appliance-core runs alone on a Linux box (npm start) and under Vitest: it never imports the ' +
      'desktop app (main/, electron/, renderer/).',
  },
  {
    target: 'renderer',
    from: 'appliance-core',
    message:
      'The console is a client like any other: it reaches an appliance only over the public HTTP ' +
      'API (API types come from /openapi.json), never by importing appliance-core.',
  },
  {
    target: 'renderer',
    from: 'main',
    message:
      'renderer/ is browser code: it reaches the main process only through window.consoleBridge ' +
      '(renderer/src/lib/bridge.ts), typed by electron/contract.',
  },
  {
    target: 'renderer',
    from: 'electron/preload',
    message:
      'renderer/ may import only the pure contract (electron/contract); the preload runs in its own context.',
  },
  {
    target: 'electron',
    from: ['main', 'renderer', 'appliance-core'],
    message:
      'electron/ is the bridge: the contract is pure TS shared by main and renderer, and the preload ' +
      'exposes only what the contract names. It depends on nothing else in the repository.',
  },
  {
    target: 'main',
    from: 'renderer',
    // renderer/csp.mjs is no browser code: the console's CSP string, one definition that the
    // desktop's protocol handler applies (bundled into main by esbuild).
    except: ['./csp.mjs'],
    message: 'main/ never imports browser code; shared types live in electron/contract.',
  },
  {
    target: 'appliance-core/src/platform',
    from: featuresDir,
    message:
      'platform/ is what every feature stands on and never imports features/: dependencies flow ' +
      'one way (platform -> features -> app.ts). Move the shared piece into platform/ or pass it in.',
  },
  ...featureBoundaryZones(),
  {
    target: 'agent',
    from: ['appliance-core', 'main', 'electron', 'renderer'],
    message:
      'agent/ is a separate program installed on monitored hosts and released on its own: it shares ' +
      'only the protocol specification (docs/agent-protocol.md) and imports nothing from the appliance or the desktop app.',
  },
  {
    target: ['appliance-core', 'main', 'electron', 'renderer'],
    from: 'agent',
    message:
      'agent/ is a separate program: the appliance and the desktop app implement docs/agent-protocol.md ' +
      'themselves and never import the agent.',
  },
];

// ---------------------------------------------------------------------------------------------
// Package restrictions (@typescript-eslint/no-restricted-imports). One rule entry per area: a
// later flat-config block replaces the options of an earlier one, so every area lists the
// repository-wide restrictions too.

const childProcessBan = ['node:child_process', 'child_process'].map((name) => ({
  name,
  importNames: ['exec', 'execSync'],
  message:
    'exec/execSync run a command line through a shell. Spawn with an argument array ' +
    '(spawn/execFile through the tool helper), never through a shell.',
}));

const betterSqliteBan = {
  name: 'better-sqlite3',
  message:
    'better-sqlite3 is imported only by appliance-core/src/platform/db/ (database.ts): use its ' +
    'DB/Statement types and helpers, so storage stays behind one module and off the Electron main thread.',
};

const netSnmpBan = {
  name: 'net-snmp',
  message:
    'net-snmp is imported only by appliance-core/src/platform/snmp/ (the one SNMP client: every ' +
    'session closed on every path, bounded walks, SnmpError): use platform/snmp/snmp.client.ts.',
};

const electronBanInCore = {
  name: 'electron',
  message:
    'appliance-core must run in plain Node (npm start, Vitest, a headless appliance): no electron imports.',
};

const electronTypeOnly = {
  name: 'electron',
  allowTypeImports: true,
  message:
    'Only main/index.ts and main/windows/ import electron at runtime. Plain modules take the ' +
    'Electron APIs they need as parameters (import type only), so Vitest runs them without the Electron binary.',
};

const nodeBuiltinNames = builtinModules.filter((name) => !name.startsWith('_'));
const nodeBuiltinPattern = (layer) => ({
  regex: `^(node:.*|(${nodeBuiltinNames.map((n) => n.replace('/', '\\/')).join('|')})(\\/.*)?)$`,
  message: `${layer} has no Node.js: node:* builtins are not available there.`,
});

function restrictImports({ paths = [], patterns = [] } = {}) {
  return {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      { paths: [...childProcessBan, ...paths], patterns },
    ],
  };
}

const importAreas = [
  {
    name: 'appliance-core/platform/db (the one better-sqlite3 importer)',
    files: ['appliance-core/src/platform/db/**'],
    rules: restrictImports({ paths: [electronBanInCore, netSnmpBan] }),
  },
  {
    name: 'appliance-core/platform/snmp (the one net-snmp importer)',
    files: ['appliance-core/src/platform/snmp/**'],
    rules: restrictImports({ paths: [electronBanInCore, betterSqliteBan] }),
  },
  {
    name: 'appliance-core',
    files: ['appliance-core/**'],
    ignores: ['appliance-core/src/platform/db/**', 'appliance-core/src/platform/snmp/**'],
    rules: restrictImports({ paths: [electronBanInCore, betterSqliteBan, netSnmpBan] }),
  },
  {
    name: 'renderer (browser layer)',
    files: ['renderer/**'],
    // The build configuration runs in Node (Vite), not in the browser.
    ignores: ['renderer/*.mjs'],
    rules: restrictImports({
      paths: [
        {
          name: 'electron',
          message:
            'renderer/ is a browser layer (also served by appliances as the web console): reach the ' +
            'main process through window.consoleBridge (src/lib/bridge.ts).',
        },
        {
          ...betterSqliteBan,
          message:
            'renderer/ is a browser layer: appliance data comes over HTTP (src/lib/api-client.ts).',
        },
      ],
      patterns: [nodeBuiltinPattern('renderer/ is a browser layer and')],
    }),
  },
  {
    name: 'electron/contract (pure TS shared by main and renderer)',
    files: ['electron/contract/**'],
    rules: restrictImports({
      paths: [
        {
          name: 'electron',
          message:
            'electron/contract is pure TS, imported by the renderer too: no electron, no DOM, no Node.',
        },
        betterSqliteBan,
      ],
      patterns: [nodeBuiltinPattern('electron/contract is pure TS shared with the browser; it')],
    }),
  },
  {
    name: 'electron/preload (sandboxed preload)',
    files: ['electron/preload/**'],
    rules: restrictImports({
      paths: [
        {
          name: 'electron',
          allowImportNames: ['contextBridge', 'ipcRenderer'],
          allowTypeImports: true,
          message:
            'The sandboxed preload uses only contextBridge and ipcRenderer: everything else happens in main/.',
        },
        betterSqliteBan,
      ],
      patterns: [nodeBuiltinPattern('A sandboxed preload')],
    }),
  },
  {
    name: 'main (plain modules, testable in Node)',
    files: ['main/**'],
    rules: restrictImports({ paths: [betterSqliteBan, electronTypeOnly] }),
  },
  {
    // After the block above on purpose: it replaces its options for the entry points.
    name: 'main (Electron entry points)',
    files: ['main/index.ts', 'main/windows/**'],
    ignores: ['**/*.test.ts'],
    rules: restrictImports({ paths: [betterSqliteBan] }),
  },
  {
    name: 'everything else (tests, scripts, configs)',
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    ignores: ['appliance-core/**', 'renderer/**', 'electron/**', 'main/**'],
    rules: restrictImports({ paths: [betterSqliteBan, electronTypeOnly, netSnmpBan] }),
  },
  {
    // After the block above on purpose: it replaces its options for the agent's program files.
    name: 'agent (Node built-ins only)',
    files: ['agent/**'],
    ignores: ['agent/**/*.test.ts', 'agent/test/**'],
    rules: restrictImports({
      patterns: [
        {
          regex: '^(?!node:|\\.)',
          message:
            'agent/ runs on monitored hosts with nothing but Node: import node:* built-ins and its own files only.',
        },
      ],
    }),
  },
];

// ---------------------------------------------------------------------------------------------
// Syntax bans (no-restricted-syntax), everywhere. One list: a later block would replace it.

const childProcessModule = '/^(node:)?child_process$/';
const restrictedSyntax = [
  {
    selector: "Property[key.name='shell'][value.value=true]",
    message:
      'shell: true runs the command line through a shell. Pass an argument array without a shell.',
  },
  {
    selector: "Property[key.value='shell'][value.value=true]",
    message:
      'shell: true runs the command line through a shell. Pass an argument array without a shell.',
  },
  {
    selector: 'CallExpression[callee.type="Identifier"][callee.name=/^(exec|execSync)$/]',
    message: 'exec/execSync run through a shell: spawn or execFile with an argument array.',
  },
  {
    selector:
      'CallExpression[callee.type="MemberExpression"][callee.property.name=/^(exec|execSync)$/][callee.object.name=/^(child_?process|childProcess|cp|proc)$/i]',
    message: 'exec/execSync run through a shell: spawn or execFile with an argument array.',
  },
  {
    selector: `ImportDeclaration[source.value=${childProcessModule}] > ImportDefaultSpecifier`,
    message:
      "Import child_process functions by name (import { spawn } from 'node:child_process') so the exec/execSync ban can see them.",
  },
  {
    selector: `ImportExpression[source.value=${childProcessModule}]`,
    message:
      'Import child_process functions statically by name so the exec/execSync ban can see them.',
  },
  {
    selector:
      'MemberExpression[object.name=/^(describe|it|test|suite|bench)$/][property.name=/^(only|skip|todo)$/]',
    message:
      'Focused, skipped and placeholder tests are not committed: remove .only/.skip/.todo ' +
      '(for an environment-dependent test use skipIf/runIf with the reason).',
  },
  {
    selector:
      'MemberExpression[object.type="MemberExpression"][object.object.name=/^(describe|it|test|suite)$/][property.name=/^(only|skip|todo)$/]',
    message:
      'Focused, skipped and placeholder tests are not committed: remove .only/.skip/.todo ' +
      '(for an environment-dependent test use skipIf/runIf with the reason).',
  },
];

/** fping runs only through platform/net/fping.ts (one process per batch, IP literals only). */
const fpingOutsidePlatformNet = [
  {
    selector: "MemberExpression[property.name='fping']",
    message:
      'fping is run only by appliance-core/src/platform/net/fping.ts (one process for many ' +
      'targets, IP literals only, FpingUnavailable when missing): call fpingAlive/fpingLatency.',
  },
  {
    selector: "Property[key.name='program'][value.value='fping']",
    message:
      'fping is run only by appliance-core/src/platform/net/fping.ts: call fpingAlive/fpingLatency.',
  },
];

export default defineConfig(
  globalIgnores([
    '**/node_modules/',
    '**/dist/',
    '.tsbuild/',
    'coverage/',
    'test-results/',
    '.stryker-tmp/',
    'data/',
    '.appliance-data/',
    'out/',
    '**/*.d.ts',
    '**/*.d.mts',
  ]),

  {
    name: 'repository/linter-options',
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,

  {
    name: 'repository/typescript-project-service',
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: root,
      },
    },
  },
  {
    name: 'repository/typescript-rule-choices',
    files: ['**/*.{ts,tsx}'],
    rules: {
      // Fastify's contract makes plugins, hooks and handlers async (a plugin without `done` must
      // return a promise) and engines implement `start(): Promise<void>`: an async function
      // without await is the API's shape there, not a mistake.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    name: 'repository/tests',
    files: ['**/*.test.{ts,tsx}', 'test/**/*.{ts,tsx}'],
    rules: {
      // Tests read HTTP bodies with light-my-request/undici json(), typed any, and assert on
      // them; the assertion is the check. Production code keeps all of these rules.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // The same reason: response bodies in tests are JSON of a shape the test itself asserts.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    name: 'repository/javascript',
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },

  {
    name: 'repository/imports-and-style',
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createNodeResolver({
          // ESM sources import './x.js' for './x.ts' (NodeNext); resolve them to the TS file.
          extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json', '.node'],
          extensionAlias: {
            '.js': ['.ts', '.tsx', '.js'],
            '.mjs': ['.mts', '.mjs'],
          },
        }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: layeringZones }],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      'no-restricted-syntax': ['error', ...restrictedSyntax],
    },
  },
  {
    // After the block above on purpose: it replaces the syntax list for appliance-core.
    name: 'repository/fping-through-platform-net',
    files: ['appliance-core/**/*.{ts,tsx,js,mjs}'],
    ignores: [
      'appliance-core/src/platform/net/**',
      // The catalogue of system programs names fping with the others.
      'appliance-core/src/platform/process/**',
    ],
    rules: { 'no-restricted-syntax': ['error', ...restrictedSyntax, ...fpingOutsidePlatformNet] },
  },

  ...importAreas.map(({ name, ...block }) => ({ name: `repository/imports/${name}`, ...block })),

  {
    name: 'repository/renderer-globals',
    files: ['renderer/**'],
    languageOptions: { globals: globals.browser },
  },
  // Generated by `npm run gen:api` from /openapi.json; a test fails when it is stale.
  globalIgnores(['renderer/src/lib/api-types.ts'], 'renderer/generated-api-types'),
  {
    // Text from devices (sysName, ifAlias, syslog, IDS payloads) is data, never markup: the console
    // renders it as React text. The repository-wide syntax bans apply here too (one list per block).
    name: 'repository/renderer-no-markup',
    files: ['renderer/src/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...restrictedSyntax,
        {
          selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']",
          message:
            'The console renders text, never markup: device text (sysName, ifAlias, syslog) would run as HTML.',
        },
        {
          selector:
            "AssignmentExpression[left.type='MemberExpression'][left.property.name=/^(innerHTML|outerHTML)$/]",
          message: 'innerHTML/outerHTML parse markup: set textContent or render React text.',
        },
        {
          selector: "CallExpression[callee.property.name='insertAdjacentHTML']",
          message: 'insertAdjacentHTML parses markup: render React text instead.',
        },
      ],
    },
  },
);
