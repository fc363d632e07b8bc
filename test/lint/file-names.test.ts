/**
 * The file-naming convention of appliance-core (docs/architecture.md), enforced:
 *
 * - every file name is kebab-case words separated by dots: `icmp.poller.ts`, `ip-map.cache.ts`;
 * - a feature source file carries its role as its second word, from ROLES (`index.ts` and test
 *   helpers under `testing/` excepted); a test is named after what it tests, plus `.test`
 *   (`ip-map.cache.test.ts`, or an aspect: `oauth.flows.test.ts`, `url-monitors.test.ts`);
 * - `.engine.ts` is only for things that start and stop: every class such a module exports has
 *   `start()` and `stop()`; one-shot runners of a system program are `.tool.ts`;
 * - migrations are `NNNN_snake_case.sql`.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../harness/process.js';

export const ROLES = [
  'routes', // a Fastify plugin of the feature's routes
  'schema', // TypeBox schemas and their types
  'repository', // the SQL of the feature's tables
  'service', // logic over repositories
  'engine', // something that starts and stops (pollers, monitors, sweeps)
  'tool', // a one-shot runner of a system program
  'poller', // one poller kind of the trackers engine
  'sweep', // one sweep kind of discovery
  'probe', // one probe kind of discovery
  'rules', // pure rules, free of I/O
  'cache', // an in-memory view invalidated by triggers
  'catalog', // a registry other features add entries to
  'access', // who may see or change what
  'crawl', // a device-crawl handler
  'widgets', // dashboard widget registrations
  'writes', // statements for the storage writer
  'resolver', // identity resolution
  'seed', // first-start data
  'pages', // server-rendered HTML
  'assets', // static assets served by the feature
  'csrf', // CSRF tokens of server-rendered forms
  'runtime', // injected process runner of a feature
  'checker', // one check kind (URL monitoring)
  'sessions', // live sessions of a feature
  'tickets', // single-use credentials
] as const;

const KEBAB = '[a-z0-9]+(?:-[a-z0-9]+)*';
const FILE = new RegExp(`^${KEBAB}(?:\\.${KEBAB})*\\.(?:ts|mts|mjs|sql|css|js)$`);
const MIGRATION = /^\d{4}_[a-z0-9]+(?:_[a-z0-9]+)*\.sql$/;

function tracked(dir: string): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', dir], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
}

const core = tracked('appliance-core/src');

describe('file names', () => {
  it('are kebab-case words separated by dots; migrations are NNNN_snake_case.sql', () => {
    const bad = core.filter((file) => {
      const name = path.basename(file);
      return file.includes('/migrations/') ? !MIGRATION.test(name) : !FILE.test(name);
    });
    expect(bad).toEqual([]);
  });

  it('carry a known role in every feature folder', () => {
    const bad = core
      .filter((file) => file.startsWith('appliance-core/src/features/'))
      .filter((file) => !file.includes('/testing/') && !/\/index\.ts$/.test(file))
      .filter((file) => !file.endsWith('.test.ts'))
      .filter((file) => {
        const words = path
          .basename(file)
          .replace(/\.(d\.)?(ts|mts|mjs)$/, '')
          .split('.');
        const role = words[1];
        return words.length < 2 || !(ROLES as readonly string[]).includes(role as string);
      });
    expect(bad).toEqual([]);
  });

  it('.engine.ts modules export only classes that start and stop', async () => {
    const engines = core.filter((file) => file.endsWith('.engine.ts'));
    expect(engines.length).toBeGreaterThan(3);
    const problems: string[] = [];
    for (const file of engines) {
      const module = (await import(path.join(ROOT, file))) as Record<string, unknown>;
      const classes = Object.entries(module).filter(
        ([, value]) =>
          typeof value === 'function' && /^class\s/.test(Function.prototype.toString.call(value)),
      );
      if (classes.length === 0) problems.push(`${file}: exports no engine class`);
      for (const [name, value] of classes) {
        const proto = (value as { prototype: Record<string, unknown> }).prototype;
        if (typeof proto.start !== 'function' || typeof proto.stop !== 'function')
          problems.push(`${file}: ${name} has no start() and stop()`);
      }
    }
    expect(problems).toEqual([]);
  });
});
