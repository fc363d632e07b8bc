#!/usr/bin/env node
/**
 * netmon-appliance-upgrader: the OS upgrader's entry (netmon-appliance-upgrader.service, root).
 * Environment (the unit's EnvironmentFile, /etc/netmon-appliance/upgrader.env):
 * UPGRADER_PORT (default 8444), UPGRADER_TARGET_CODENAME (default: the release after this one),
 * UPGRADER_TOKEN_FILE (default /run/netmon-appliance-upgrader/token), APPLIANCE_DATA_DIR (the
 * appliance's TLS identity under tls/, default /var/lib/netmon-appliance).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnRunner } from './root-helper.runner.js';
import { realFiles } from './root-helper.server.js';
import { aptSourceFiles, NEXT_CODENAME, OsUpgrader } from './os-upgrader.server.js';

function main(): void {
  const env = process.env;
  const from =
    /^VERSION_CODENAME=("?)([a-z]*)\1\s*$/m.exec(realFiles.read('/etc/os-release') ?? '')?.[2] ??
    '';
  const to = env.UPGRADER_TARGET_CODENAME || NEXT_CODENAME[from] || '';
  const port = Number(env.UPGRADER_PORT ?? '8444');
  const dataDir = env.APPLIANCE_DATA_DIR ?? '/var/lib/netmon-appliance';
  const upgrader = new OsUpgrader({
    run: spawnRunner,
    files: realFiles,
    tokenFile: env.UPGRADER_TOKEN_FILE ?? '/run/netmon-appliance-upgrader/token',
    from,
    to,
    aptSources: aptSourceFiles(realFiles),
    tls: {
      cert: fs.readFileSync(path.join(dataDir, 'tls/cert.pem'), 'utf8'),
      key: fs.readFileSync(path.join(dataDir, 'tls/key.pem'), 'utf8'),
    },
  });
  upgrader.server.listen(port, () => {
    upgrader.issueToken();
    process.stderr.write(`upgrader listening on port ${port}: ${from} -> ${to}\n`);
  });
  process.on('SIGTERM', () => {
    if (upgrader.state === 'running' || upgrader.state === 'rebooting') return;
    upgrader.server.close(() => process.exit(0));
  });
}

try {
  main();
} catch (err) {
  process.stderr.write(`upgrader: ${(err as Error).message}\n`);
  process.exit(1);
}
